"""Declarations split where Lean's commands start: a line in column 0 that continues the
command before it (a statement continued at column 0, ``by sorry`` at column 0, a line that
starts with ``:``, ``|``, ``(`` or an operator, or inside an open bracket) is no new command."""

# ruff: noqa: RUF001  (Lean's double-struck N is meant, not a look-alike letter)

from __future__ import annotations

from gapscope.lean.verdict import LeanMessage
from gapscope.t2.declarations import head, split_declarations
from gapscope.t2.programs import attribute, build_programs
from gapscope.t2.records import T2Record, load_records
from gapscope.t2.successors import record_successors
from tests.environment import SharedData


def _spans(text: str) -> list[tuple[str, str | None, int, int]]:
    return [(d.kind, d.name, d.start_line, d.end_line) for d in split_declarations(text)]


def test_a_statement_and_its_proof_continued_at_column_0_stay_one_declaration() -> None:
    text = "theorem s1 (n : ℕ)\n(h : n = 1) : n + 0 = 1 := by\nsorry\ntheorem s2 : True := trivial"
    assert _spans(text) == [("theorem", "s1", 0, 3), ("theorem", "s2", 3, 4)]


def test_alternatives_operators_and_open_brackets_continue_a_command() -> None:
    text = (
        "def f : ℕ → ℕ\n| 0 => 1\n| n + 1 => f n\n"
        "def g (a : ℕ) :\nℕ :=\na\n+ 1\n"
        "theorem t : g 0 = 1 := by\n  simp [g,\nf]\n"
    )
    assert _spans(text) == [("def", "f", 0, 3), ("def", "g", 3, 7), ("theorem", "t", 7, 10)]


def test_doc_comments_attributes_modifiers_and_scopes_belong_to_their_declaration() -> None:
    text = (
        "/-- doc -/\n@[simp]\nprivate theorem a : True := trivial\n#eval 1\n"
        "open Nat in\ntheorem b : True := trivial\n"
        "structure S where\n  x : ℕ\nderiving Repr\nderiving instance BEq for S\n"
        'local notation3 "T" => True\ntheorem c : T := trivial'
    )
    assert _spans(text) == [
        ("theorem", "a", 0, 3),
        ("command", None, 3, 4),
        ("theorem", "b", 4, 6),
        ("structure", "S", 6, 9),
        ("command", None, 9, 10),
        ("command", None, 10, 11),
        ("theorem", "c", 11, 12),
    ]


def test_a_declaration_keyword_ends_a_statement_left_unclosed() -> None:
    text = "theorem cut (h : x\ntheorem u : True := trivial"
    assert _spans(text) == [("theorem", "cut", 0, 1), ("theorem", "u", 1, 2)]


def test_an_error_in_a_statement_continued_at_column_0_is_placed_in_its_declaration() -> None:
    target = "theorem foo : 1 + 1 = 2 := rfl"
    after = "\ntheorem s1 (n : ℕ)\n(h : n = foo.symm ▸ n) : n = n := by\nsorry\n"
    after += "theorem s2 : 2 = 2 := rfl"
    record = T2Record(
        id="made.foo",
        target_code=target,
        formal_language=target + after,
        natural_language="",
        target_code_name="theorem foo",
        before_target_code="",
        after_target_code=after,
        header="import Mathlib",
        dataset_name="made",
        line=1,
    )
    assert [s.name for s in record_successors(record)] == ["s1"]  # it uses foo on its second line
    programs = build_programs(record, target, timeout_s=10)
    # Body: the target on line 1, a blank line, s1 on lines 3-5, s2 on line 6.
    where = attribute((LeanMessage("error", "type mismatch", line=4),), programs)
    assert (where.successors, where.unplaced) == ((1,), 0)


RELEASED = "t2/data/final/existing_datasets.all.jsonl"


def test_the_released_statement_continued_at_column_0_is_one_declaration(
    shared_data: SharedData,
) -> None:
    records = load_records(shared_data(RELEASED)).records
    (record,) = [r for r in records if r.id.endswith("LinearTrinomials")]
    last = split_declarations(record.after_target_code)[-1]
    assert (last.name, last.end_line - last.start_line) == ("algebra_24801", 4)
    assert last.text.endswith("m ∈ validMSet := by sorry")


def test_every_released_declaration_is_split_whole(shared_data: SharedData) -> None:
    """Cutting at every column-0 line (the old splitter) broke 9 released rows into 613
    pieces, 12 of them fragments (a statement or ``by sorry`` continued at column 0 became a
    piece of its own); split by command structure, each of the 601 pieces of
    ``after_target_code`` opens with a declaration's head."""
    pieces = [
        (record.id, d.text)
        for record in load_records(shared_data(RELEASED)).records
        for d in split_declarations(record.after_target_code)
    ]
    assert len(pieces) == 601
    assert [(rid, text[:40]) for rid, text in pieces if head(text) is None] == []
