"""Family records: validation that names what is wrong, loaders, corrections, tested milestones."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from gapscope.ladder.families import (
    FamiliesVersion,
    Family,
    LoadResult,
    RecordError,
    load_families,
    milestone_prompt,
    parse_jsonl,
    split_milestone_prompt,
)
from gapscope.ladder.schema import AnswerSchema, MilestoneType
from gapscope.records import SourceError
from tests.environment import SharedData

PROBLEM = "Find the sum of the first $10$ positive odd numbers."
RELEASED_STYLE_PROMPT = (
    "You are solving one milestone from a larger problem.\n"
    "Keep your response focused on this milestone only.\n\n"
    "Original problem (context):\n"
    f"{PROBLEM}\n\n"
    "Milestone:\n"
    "Write the k-th positive odd number in terms of k.\n\n"
    "Output instruction: Put the expression in \\boxed{}.\n"
)


def milestone(**overrides: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "prompt": RELEASED_STYLE_PROMPT,
        "answer": "2k-1",
        "note": "ACCEPT IF equivalent final answer is present.",
        "type": "MODEL",
        "pre_train_phat": 0.5,
    }
    record.update(overrides)
    return record


def family(pid: str = "p1", **overrides: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "pid": pid,
        "parent_prompt": f"Solve the following problem.\n\nProblem:\n{PROBLEM}\n",
        "parent_answer": "100",
        "parent_note": "ACCEPT IF equivalent final answer is present.",
        "milestones": [
            milestone(),
            milestone(answer="k^2", type="KEY_MOVE"),
            milestone(answer="100", type="INTEGRATE"),
        ],
    }
    record.update(overrides)
    return record


def jsonl(*records: object) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


def test_released_style_record_loads_and_round_trips() -> None:
    record = family()
    result = parse_jsonl(jsonl(record))
    assert result.problems == []
    (fam,) = result.families
    assert fam.to_dict() == record
    assert Family.from_dict(fam.to_dict()) == fam


def test_description_and_instruction_are_read_from_a_released_prompt() -> None:
    fam = Family.from_dict(family())
    first = fam.milestones[0]
    assert first.description == "Write the k-th positive odd number in terms of k."
    assert first.instruction == "Put the expression in \\boxed{}."
    assert first.schema is None  # left for the verifier to infer
    assert milestone_prompt(PROBLEM, first.description, first.instruction) == first.prompt


def test_explicit_description_wins_and_survives_round_trip() -> None:
    record = family(milestones=[milestone(description="Name the k-th odd number.")])
    fam = Family.from_dict(record)
    assert fam.milestones[0].description == "Name the k-th odd number."
    assert fam.milestones[0].instruction == "Put the expression in \\boxed{}."
    assert Family.from_dict(fam.to_dict()) == fam


def test_split_milestone_prompt_rejects_other_formats() -> None:
    assert split_milestone_prompt("Just solve it.") is None
    assert split_milestone_prompt("x\n\nOutput instruction: Box it.\n") is None


def test_gold_answer_applies_the_correction() -> None:
    plain = Family.from_dict(family())
    corrected = Family.from_dict(
        family(parent_answer_corrected="101", correction_note="arithmetic slip")
    )
    assert plain.gold_answer == "100"
    assert corrected.gold_answer == "101"
    assert corrected.parent_answer == "100"


def test_published_version_grades_as_the_paper_did(tmp_path: Path) -> None:
    record = family(
        parent_answer_corrected="101", correction_note="slip", milestone_gold_invalid=[1]
    )
    path = tmp_path / "families.jsonl"
    path.write_text(jsonl(record), encoding="utf-8")
    (corrected,) = load_families(path).families
    (published,) = load_families(path, version=FamiliesVersion.PUBLISHED).families
    assert (corrected.gold_answer, corrected.tested_indices) == ("101", (0,))
    # the original gold and every non-INTEGRATE milestone, as before the corrections
    assert (published.gold_answer, published.tested_indices) == ("100", (0, 1))
    assert published == Family.from_dict(family())
    assert published.to_dict() == family()


def test_tested_milestones_withhold_integrate_and_invalid_golds() -> None:
    fam = Family.from_dict(family(milestone_gold_invalid=[1]))
    assert fam.tested_indices == (0,)
    assert [m.answer for m in fam.tested_milestones] == ["2k-1"]
    assert Family.from_dict(family()).tested_indices == (0, 1)


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"pid": ""}, "pid"),
        ({"parent_prompt": None}, "parent_prompt"),
        ({"parent_answer": 100}, "parent_answer"),
        ({"parent_schema": "NUMERIC"}, "parent_schema"),
        ({"milestones": []}, "milestones"),
        ({"milestone_gold_invalid": [5]}, "milestone_gold_invalid[0]"),
        ({"milestone_gold_invalid": "1"}, "milestone_gold_invalid"),
        ({"refrence_solution": "typo"}, "refrence_solution"),
        ({"milestones": [milestone(type="GUESS")]}, "milestones[0].type"),
        ({"milestones": [milestone(), milestone(answer=None)]}, "milestones[1].answer"),
        ({"milestones": [milestone(schema="VECTOR")]}, "milestones[0].schema"),
        ({"milestones": [milestone(pre_train_phat=1.5)]}, "milestones[0].pre_train_phat"),
        ({"milestones": [milestone(prompt="Solve x.")]}, "milestones[0].description"),
        ({"milestones": ["not an object"]}, "milestones[0]"),
    ],
)
def test_each_bad_field_is_named_and_only_its_record_is_skipped(
    overrides: dict[str, Any], field: str
) -> None:
    bad = {**family("bad"), **overrides}
    result = parse_jsonl(jsonl(family("good-1"), bad, family("good-2")))
    assert [f.pid for f in result.families] == ["good-1", "good-2"]
    assert [p.field for p in result.problems] == [field]
    (problem,) = result.problems
    assert problem.line == 2
    assert problem.record == ("bad" if field != "pid" else None)
    assert field in str(problem)


def test_unknown_milestone_type_message_lists_the_vocabulary() -> None:
    result = parse_jsonl(jsonl(family(milestones=[milestone(type="GUESS")])))
    (problem,) = result.problems
    assert "GUESS" in problem.message
    assert "INTEGRATE" in problem.message
    assert "p1" in str(problem)


def test_every_fault_of_one_record_is_reported() -> None:
    bad = family(parent_answer=None, milestones=[milestone(type="GUESS", answer=None)])
    result = parse_jsonl(jsonl(bad))
    assert result.families == []
    assert {p.field for p in result.problems} == {
        "parent_answer",
        "milestones[0].type",
        "milestones[0].answer",
    }


def test_missing_pid_is_reported_by_line() -> None:
    record = family()
    del record["pid"]
    (problem,) = parse_jsonl(jsonl(family("a"), record)).problems
    assert (problem.line, problem.record, problem.field) == (2, None, "pid")
    assert str(problem).startswith("line 2: pid")


def test_bad_json_line_is_a_problem_and_blank_lines_are_not() -> None:
    result = parse_jsonl(jsonl(family("a"), "{not json", "", family("b")))
    assert [f.pid for f in result.families] == ["a", "b"]
    (problem,) = result.problems
    assert (problem.line, problem.field) == (2, None)
    assert "not valid JSON" in problem.message


def test_non_object_json_is_a_problem() -> None:
    (problem,) = parse_jsonl(jsonl("[1, 2]")).problems
    assert problem.field == "record"


def test_duplicate_pid_keeps_the_first() -> None:
    first = family("dup")
    second = family("dup", parent_answer="7")
    result = parse_jsonl(jsonl(first, second))
    assert [f.parent_answer for f in result.families] == ["100"]
    (problem,) = result.problems
    assert (problem.line, problem.record, problem.field) == (2, "dup", "pid")
    assert "line 1" in problem.message


def test_nulls_count_as_absent_like_hub_columns() -> None:
    record = family(parent_answer_corrected=None, milestone_gold_invalid=None, extra_column=None)
    record["milestones"][0].update(schema=None, description=None, pre_train_phat=None)
    fam = Family.from_dict(record)
    assert fam.gold_answer == "100"
    assert fam.milestones[0].description.startswith("Write the k-th")


def test_schema_and_types_are_enums() -> None:
    fam = Family.from_dict(
        family(parent_schema="NUMBER", milestones=[milestone(schema="EXPR", type="LEMMA")])
    )
    assert fam.parent_schema is AnswerSchema.NUMBER
    assert fam.milestones[0].schema is AnswerSchema.EXPR
    assert fam.milestones[0].type is MilestoneType.LEMMA


def test_from_dict_raises_record_error_with_all_faults() -> None:
    with pytest.raises(RecordError) as info:
        Family.from_dict({"pid": "x"})
    fields = {f for f, _ in info.value.faults}
    assert {"parent_prompt", "parent_answer", "milestones"} <= fields


def test_load_families_reads_a_local_file(tmp_path: Path) -> None:
    path = tmp_path / "families.jsonl"
    path.write_text(jsonl(family("a"), family("b")), encoding="utf-8")
    result = load_families(path)
    assert isinstance(result, LoadResult)
    assert [f.pid for f in result.families] == ["a", "b"]
    assert load_families(str(path)).families == result.families


def test_load_families_missing_local_path(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="no such file"):
        load_families(tmp_path / "missing.jsonl")
    with pytest.raises(SourceError, match="no such file"):
        load_families("data/missing.jsonl")
    with pytest.raises(SourceError, match="directory"):
        load_families(tmp_path)


def test_hub_id_without_datasets_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setitem(sys.modules, "datasets", None)
    with pytest.raises(SourceError, match="pip install datasets"):
        load_families("someone/oracle-families")


def test_hub_id_offline_says_to_use_a_local_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(SourceError, match="offline"):
        load_families("someone/oracle-families")


def _fake_datasets(rows: list[dict[str, Any]] | Exception) -> types.ModuleType:
    module = types.ModuleType("datasets")

    def load_dataset(name: str, split: str) -> list[dict[str, Any]]:
        if isinstance(rows, Exception):
            raise rows
        assert (name, split) == ("someone/oracle-families", "test")
        return rows

    module.load_dataset = load_dataset  # type: ignore[attr-defined]
    return module


def test_hub_rows_are_validated_like_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    hub_row = family("a", parent_answer_corrected=None)  # Hub fills absent columns with None
    monkeypatch.setitem(
        sys.modules, "datasets", _fake_datasets([hub_row, family("b", milestones=[])])
    )
    result = load_families("someone/oracle-families", split="test")
    assert [f.pid for f in result.families] == ["a"]
    assert [(p.line, p.record, p.field) for p in result.problems] == [(2, "b", "milestones")]


def test_hub_failure_is_wrapped(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setitem(sys.modules, "datasets", _fake_datasets(ConnectionError("no route")))
    with pytest.raises(SourceError, match="no route"):
        load_families("someone/oracle-families", split="test")


def test_released_354_families_all_load_and_round_trip(shared_data: SharedData) -> None:
    released = shared_data("oracleladder/data/diagnostic_354_families.jsonl")
    result = load_families(released)
    assert result.problems == []
    assert len(result.families) == 354
    lines = released.read_text(encoding="utf-8").splitlines()
    assert all(
        f.to_dict() == json.loads(line) for f, line in zip(result.families, lines, strict=True)
    )
    assert all(m.description for f in result.families for m in f.milestones)
    assert sum(f.parent_answer_corrected is not None for f in result.families) == 10


def test_released_families_as_published_equal_the_first_release(
    shared_data: SharedData,
) -> None:
    """Paper mode reads the corrected file as the release first shipped it (commit dbed233),
    where it is present beside the current one."""
    first = load_families(shared_data("oracleladder/data/diagnostic_354_families_dbed233.jsonl"))
    now = load_families(
        shared_data("oracleladder/data/diagnostic_354_families.jsonl"),
        version=FamiliesVersion.PUBLISHED,
    )
    assert now.families == first.families
