"""Loading T2 records and auditing their defects (fixtures in the released format)."""

# ruff: noqa: RUF001  (Lean's double-struck N and Z are meant, not look-alike letters)

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from gapscope.records import SourceError
from gapscope.t2.audit import Defect, audit_records
from gapscope.t2.declarations import has_body, split_declarations, unbalanced_bracket
from gapscope.t2.records import load_records
from gapscope.t2.successors import record_successors, successor_profile, target_identity

FIXTURE = Path(__file__).parent / "fixtures" / "records.jsonl"


def test_loader_names_line_id_and_field() -> None:
    loaded = load_records(FIXTURE)
    assert len(loaded.records) == 7
    messages = [str(p) for p in loaded.problems]
    assert "line 8 (fixture-7.bad): target_code: must be a string, got int" in messages
    assert any(m.startswith("line 9: not valid JSON") for m in messages)


def test_missing_field_is_named(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({"id": "x", "target_code": "def x := 1"}) + "\n")
    (problem,) = load_records(path).problems
    assert (problem.line, problem.record, problem.field) == (1, "x", "formal_language")


def test_missing_file_is_a_source_error(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="no such file"):
        load_records(tmp_path / "absent.jsonl")


def test_audit_counts_every_defect_class_and_keeps_the_clean_records() -> None:
    loaded = load_records(FIXTURE)
    result = audit_records(loaded.records, loaded.problems)
    assert result.counts() == {
        "invalid_record": 2,
        "target_no_body": 1,
        "target_unbalanced": 1,
        "duplicate_id": 1,
        "formal_language_mismatch": 1,
        "target_not_found_once": 2,
        "no_mentioning_successor": 1,
        "too_few_successors": 0,
    }
    assert [r.id for r in result.valid] == ["fixture-1.double_eq", "fixture-2.sq_nonneg'"]
    assert result.ids()[Defect.TARGET_NOT_FOUND_ONCE] == ["fixture-4.mismatch", "fixture-6.twice"]
    assert result.skipped() == 7
    duplicate = next(f for f in result.findings if f.defect is Defect.DUPLICATE_ID)
    assert duplicate.line == 4 and "first seen on line 1 (different content)" in duplicate.detail


def test_whitespace_alone_is_not_a_formal_language_mismatch() -> None:
    record = load_records(FIXTURE).records[0]
    shifted = replace(record, formal_language="\n" + record.formal_language)
    assert audit_records([shifted]).valid == [shifted]


def test_successors_mention_and_sorry() -> None:
    records = load_records(FIXTURE).records
    five = record_successors(records[0])
    assert [s.name for s in five] == ["s1", "s2", "s3", "s4", "s5"]
    assert all(s.direct and s.proved_without_sorry for s in five)
    two = record_successors(records[1])  # ``other`` never uses the target: not a successor
    assert [(s.name, s.direct, s.uses_sorry) for s in two] == [
        ("uses_sq", True, False),
        ("uses_sq_twice", False, False),
    ]


def test_mention_is_a_whole_identifier() -> None:
    lonely = load_records(FIXTURE).records[5]
    # ``lonely₂`` only extends the name: not a mention.
    assert record_successors(lonely) == []


def test_target_identity_from_head_or_name_field() -> None:
    records = load_records(FIXTURE).records
    assert target_identity(records[0]).name == "double_eq"
    assert target_identity(records[0]).kind == "theorem"


def test_declaration_splitting_keeps_attributes_docs_and_alternatives_together() -> None:
    text = (
        "open Nat\n/-- doc\ntheorem inside -/\n@[simp]\ntheorem a : 1 = 1 := rfl\n"
        "def f : ℕ → ℕ\n| 0 => 1\n| n + 1 => f n\ntermination_by n => n\n"
    )
    parts = split_declarations(text)
    assert [(d.kind, d.name) for d in parts] == [("command", None), ("theorem", "a"), ("def", "f")]
    assert (parts[1].start_line, parts[1].end_line) == (1, 5)  # from its doc comment
    assert (parts[2].start_line, parts[2].end_line) == (5, 9)


def test_truncation_detectors() -> None:
    assert not has_body("theorem t {f g : D")
    assert unbalanced_bracket("theorem t (h : ∀ x, f x") == "unclosed '('"
    assert unbalanced_bracket('def s : String := "(" -- )') is None
    assert has_body("inductive T\n| a : T")
    assert has_body("structure P where\n  x : ℕ")


def test_profile_counts_records_whose_successors_are_all_sorry_stubs() -> None:
    record = load_records(FIXTURE).records[1]
    stub = "\ntheorem uses : sq_nonneg' 0 = sq_nonneg' 0 := by\n  sorry"
    stubs = replace(record, after_target_code=stub)
    profile = successor_profile([record, stubs])
    assert profile["no_theorem_proved_without_sorry"] == 1
    assert profile["records_by_successors"] == {1: 1, 2: 1}
    assert profile["records_by_direct_successors"] == {1: 2}
    assert profile["records_by_later_declarations"] == {1: 1, 3: 1}


def test_records_with_fewer_successors_than_the_minimum_are_filtered_and_funnelled() -> None:
    loaded = load_records(FIXTURE)
    default = audit_records(loaded.records, loaded.problems)
    assert default.funnel() == {"records": 9, "without_defects": 2, "successors>=2": 2}
    strict = audit_records(loaded.records, loaded.problems, min_successors=3)
    assert [r.id for r in strict.valid] == ["fixture-1.double_eq"]  # 5 successors; fixture-2: 2
    assert strict.ids()[Defect.TOO_FEW_SUCCESSORS] == ["fixture-2.sq_nonneg'"]
    assert strict.funnel() == {"records": 9, "without_defects": 2, "successors>=3": 1}
    assert strict.to_dict()["min_successors"] == 3


def test_one_successor_is_too_few_by_default() -> None:
    record = load_records(FIXTURE).records[1]
    one = replace(record, after_target_code="\ntheorem uses_sq : 0 ≤ (1 : ℤ) := sq_nonneg' 1")
    one = replace(one, formal_language=record.header + one.target_code + one.after_target_code)
    result = audit_records([one])
    assert result.valid == []
    assert result.counts()["too_few_successors"] == 1
    assert audit_records([one], min_successors=1).valid == [one]


def test_a_negative_minimum_is_refused() -> None:
    with pytest.raises(ValueError, match="min_successors must be >= 0"):
        audit_records([], min_successors=-1)
