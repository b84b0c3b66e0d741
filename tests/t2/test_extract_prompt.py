"""Answer extraction, context settings and the NL file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gapscope.t2.declarations import split_declarations
from gapscope.t2.extract import (
    MAX_CODE_CHARS,
    AnswerStatus,
    extract_answer,
    last_lean_block,
    released_answer,
)
from gapscope.t2.prompting import load_nl_file, load_nl_files, parse_contexts
from gapscope.t2.successors import TargetIdentity

TARGET = TargetIdentity("theorem", "foo")


def test_the_last_lean_block_wins_over_earlier_and_other_tags() -> None:
    reply = (
        "```lean\ntheorem foo : False := sorry\n```\n"
        "```Lean4\nlemma foo : True := trivial\n```\n"
        "```text\nnot code\n```\n"
    )
    assert last_lean_block(reply) == "lemma foo : True := trivial\n"


def test_any_tag_when_no_block_is_tagged_lean() -> None:
    assert last_lean_block("```\ntheorem foo : True := trivial\n```") == (
        "theorem foo : True := trivial\n"
    )


def test_an_unclosed_last_block_runs_to_the_end() -> None:
    answer = extract_answer("```lean\nimport Mathlib\ntheorem foo : True := by\n  trivial", TARGET)
    assert answer.status is AnswerStatus.OK
    assert answer.code == "theorem foo : True := by\n  trivial"


def test_helpers_are_kept_but_the_target_must_be_declared() -> None:
    code = "lemma helper : True := trivial\ntheorem foo : True := helper"
    assert extract_answer(f"```lean\n{code}\n```", TARGET).code == code
    renamed = extract_answer("```lean\nlemma helper : True := trivial\n```", TARGET)
    assert renamed.status is AnswerStatus.RENAMED and "lemma helper" in renamed.detail


def test_unknown_kind_accepts_any_declaration_of_the_name() -> None:
    target = TargetIdentity(None, "Stromino")
    answer = extract_answer("```lean\ninductive Stromino\n| a : Stromino\n```", target)
    assert answer.status is AnswerStatus.OK


def test_nothing_to_check() -> None:
    assert extract_answer("I cannot do this.", TARGET).status is AnswerStatus.NO_ANSWER
    assert extract_answer("```lean\n\n```", TARGET).status is AnswerStatus.NO_ANSWER


def test_contexts() -> None:
    assert [c.name for c in parse_contexts("all")] == ["nl+st", "nl", "st", "none"]
    (st,) = parse_contexts("st")
    assert (st.nl, st.successors) == (False, True)
    with pytest.raises(ValueError, match="distinct names"):
        parse_contexts("nl,nl")


def test_nl_file_forms(tmp_path: Path) -> None:
    mapping = tmp_path / "nl.json"
    mapping.write_text(json.dumps({"a": ["first", "second"], "b": "plain"}))
    assert load_nl_file(mapping) == {"a": "first", "b": "plain"}
    lines = tmp_path / "nl.jsonl"
    lines.write_text('{"id": "a", "target_natural_language": ["x"]}\n{"id": "b", "nl": "y"}\n')
    assert load_nl_file(lines) == {"a": "x", "b": "y"}
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "nl": "x"}\n{"id": "b"}\n')
    with pytest.raises(ValueError, match=r"line 2 \(b\): none of the fields target_natural"):
        load_nl_file(bad)


def test_nl_file_reads_t2s_informalize_output(tmp_path: Path) -> None:
    """T2's results_merged.json: a JSON array of whole records, each with the source problem
    in natural_language and the target's description in target_natural_language (a list)."""
    merged = tmp_path / "results_merged.json"
    rows = [
        {
            "id": "p.a",
            "natural_language": "the source problem",
            "target_natural_language": ["a describes the sum"],
            "target_natural_language_raw": ["```plaintext\na describes the sum\n```"],
        },
        {"id": "p.b", "natural_language": "only the problem"},
    ]
    merged.write_text(json.dumps(rows, indent=4))
    assert load_nl_file(merged) == {"p.a": "a describes the sum", "p.b": "only the problem"}
    merged.write_text(json.dumps([*rows, {"id": 3}]))
    with pytest.raises(ValueError, match=r"element 2: expected an object with a string 'id'"):
        load_nl_file(merged)
    lines = tmp_path / "broken.jsonl"
    lines.write_text('{"id": "a", "nl": "x"}\n{"id": \n')
    with pytest.raises(ValueError, match=r"line 2: not valid JSON .*expected a JSON array"):
        load_nl_file(lines)


def test_nl_files_merge_and_a_conflict_names_both(tmp_path: Path) -> None:
    noprop, prop = tmp_path / "noprop.json", tmp_path / "prop.json"
    noprop.write_text(json.dumps([{"id": "a", "target_natural_language": ["x"]}]))
    prop.write_text(json.dumps([{"id": "b", "target_natural_language": ["y"]}]))
    assert load_nl_files([noprop, prop]) == {"a": "x", "b": "y"}
    prop.write_text(json.dumps([{"id": "a", "target_natural_language": ["other"]}]))
    with pytest.raises(ValueError, match=r"a: described differently in .*noprop.json and"):
        load_nl_files([noprop, prop])


def test_a_code_block_over_the_cap_is_refused_unread_naming_its_size() -> None:
    """Reading Lean is linear but slow in Python: a block past MAX_CODE_CHARS (a hostile
    32 MB reply) is no answer, with its size and the cap, under either extraction."""
    code = "def x := 1\n" * (MAX_CODE_CHARS // 11 + 1)
    reply = f"```lean\n{code}```"
    for answer in (extract_answer(reply, TargetIdentity("x", "def")), released_answer(reply)):
        assert answer.status is AnswerStatus.NO_ANSWER and answer.code is None
        assert f"has {len(code):,} characters, over the {MAX_CODE_CHARS:,} T2 reads" in (
            answer.detail
        )
    # at the cap it is read as any other
    fits = "def x := 1\n" * (MAX_CODE_CHARS // 11 - 1)
    read = extract_answer(f"```lean\n{fits}```", TargetIdentity("x", "def"))
    assert read.status is not AnswerStatus.NO_ANSWER and read.code == fits.strip("\n")


def test_split_declarations_numbers_lines_of_many_commands() -> None:
    text = "def a := 1\n\n-- c\ndef b := 2\ntheorem t : True := trivial\n"
    spans = [(d.name, d.start_line, d.end_line) for d in split_declarations(text * 3)]
    assert spans[:3] == [("a", 0, 1), ("b", 3, 4), ("t", 4, 5)]
    assert spans[-1] == ("t", 14, 15)
