"""One head reader for the soundness rule and T2's splitter: every head form, both agree.

A declaration T2's splitter sees but the axiom queries do not is a target proved from a user
``axiom`` that nobody asks about; each case below is read by both and must agree."""

# ruff: noqa: RUF001  (Lean's Greek letters are meant)

from __future__ import annotations

import pytest

from gapscope.lean.heads import read_heads
from gapscope.lean.protocol import ReplResponse
from gapscope.lean.soundness import judge, prepare
from gapscope.lean.verdict import LeanMessage, Status
from gapscope.t2.declarations import head, split_declarations

CASES = [
    # (code, the splitter's (kind, name) of the first chunk, soundness's queried names)
    ("open Foo.in axiom cheat : False", ("axiom", "cheat"), ("cheat",)),
    (
        "open Foo.in theorem target (n : Nat) : n = n := cheat.elim",
        ("theorem", "target"),
        ("target",),
    ),
    ("theorem target.{u} (α : Sort u) (a : α) : a = a := rfl", ("theorem", "target"), ("target",)),
    ("theorem A.«b c».d.{u, v} : True := trivial", ("theorem", "A.«b c».d"), ("A.«b c».d",)),
    ("@[simp, instance] theorem a : True := trivial", ("theorem", "a"), ("a",)),
    ("/-- theorem fake : False -/\nprivate theorem b : True := trivial", ("theorem", "b"), ("b",)),
    (
        "set_option maxHeartbeats 400 in\nopen Nat in\nnoncomputable def c : Nat := 1",
        ("def", "c"),
        ("c",),
    ),
    ("protected unsafe def d : Nat := 1", ("def", "d"), ("d",)),
    ("partial def e : Nat → Nat := e", ("def", "e"), ("e",)),
    ("theorem /- ] := -/ «f g» : True := trivial", ("theorem", "«f g»"), ("«f g»",)),
    ("open Nat theorem i : True := trivial", ("theorem", "i"), ("i",)),
    ("open Nat in open Foo.in lemma j : True := trivial", ("lemma", "j"), ("j",)),
    (
        "instance (priority := low) instFoo : Inhabited Nat := ⟨0⟩",
        ("instance", "instFoo"),
        ("instFoo",),
    ),
    ("instance : Inhabited Nat := ⟨0⟩", ("instance", None), ()),
    (
        "instance (priority := (default + 1)) instBar : Inhabited Nat := ⟨0⟩",
        ("instance", "instBar"),
        ("instBar",),
    ),
    ("instance (priority := low", ("instance", None), ()),
    ("class inductive C | a", ("class", "C"), ()),
    ("deriving instance BEq for S", None, ()),
    ("attribute [local instance] foo", None, ()),
    ('#check "theorem ghost : False"', None, ()),
    ("def «theorem x» : Nat := 1", ("def", "«theorem x»"), ("«theorem x»",)),
]


@pytest.mark.parametrize(("code", "first", "queried"), CASES)
def test_the_splitter_and_the_axiom_queries_read_one_head(
    code: str, first: tuple[str, str | None] | None, queried: tuple[str, ...]
) -> None:
    assert head(code) == first
    assert prepare(code).names == queried
    # Every declaration the splitter names is one the queries ask about.
    for d in split_declarations(code):
        if d.is_declaration and d.name is not None and d.kind not in ("class", "structure"):
            assert d.name in prepare(code).names


def test_a_user_axiom_after_open_dotted_in_is_queried_with_the_target() -> None:
    code = (
        "namespace Foo.in\nend Foo.in\n"
        "open Foo.in axiom cheat : False\n"
        "open Foo.in theorem target (n : Nat) : n = n := cheat.elim"
    )
    prepared = prepare(code)
    assert prepared.names == ("cheat", "target")
    assert prepared.code.endswith("\n#print axioms cheat\n#print axioms target")
    assert [(d.kind, d.name) for d in split_declarations(code) if d.is_declaration] == [
        ("axiom", "cheat"),
        ("theorem", "target"),
    ]


def test_explicit_universes_are_no_part_of_the_queried_name() -> None:
    prepared = prepare("theorem target.{u} (α : Sort u) (a : α) : a = a := rfl")
    assert prepared.code.endswith("\n#print axioms target")


def test_namespaces_sections_and_mutual_blocks_scope_the_names() -> None:
    code = (
        "namespace A\nsection S\ntheorem h : True := trivial\nend S\n"
        "mutual\ndef f : Nat := 1\nend\nend A\ntheorem _root_.k : True := trivial\n"
        "example : True := trivial"
    )
    assert prepare(code).names == ("A.h", "A.f", "k", "gapscope_example_1")
    assert [h.qualified for h in read_heads(code)] == ["A.h", "A.f", "k", None]


def test_an_example_after_a_command_on_its_line_is_renamed_in_place() -> None:
    prepared = prepare("open Nat example : True := trivial")
    assert prepared.code.startswith("open Nat theorem gapscope_example_1 : True := trivial\n")


def test_a_hostile_chain_of_open_in_is_read_without_backtracking() -> None:
    # The splitter's old regex took 42 s on n = 26, doubling every step; the reader is one pass.
    code = "open a in " * 32 + "zzz"
    assert head(code) is None and prepare(code).names == ()


def test_code_the_lexer_cannot_read_to_the_end_is_never_valid() -> None:
    # The ``{ "a" }`` part may be code or text to Lean: whatever follows is unknown, so the
    # axiom and the theorem after it were never queried, and only ``s`` was (VALID before).
    code = 'def s : String := s!"{ "a" }"\naxiom cheat : False\ntheorem t : False := cheat'
    prepared = prepare(code)
    assert prepared.unread is not None and prepared.unread.startswith("line 1 (")
    reply = ReplResponse(messages=(LeanMessage("info", "'s' does not depend on any axioms", 4, 0),))
    verdict = judge(reply, prepared, 0.0)
    assert (
        verdict.status is Status.SERVER_ERROR and "could not be read past line 1" in verdict.detail
    )
