"""Loading miniF2F-style records: validation, skipping, sources and subset selection."""

# ruff: noqa: RUF001  (Lean's double-struck N and R are meant, not look-alike letters)

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gapscope.prove.problems import (
    Problem,
    load_problems,
    parse_jsonl,
    read_records,
    select,
)
from gapscope.records import SourceError
from tests.environment import SharedData

HEADER = "import Mathlib\n\n"


def _record(name: str, split: str = "test", **extra: object) -> dict[str, object]:
    statement = f"theorem {name} (x : ℕ) (h : x = 2) : x + x = 4 := by"
    return {"name": name, "split": split, "header": HEADER, "formal_statement": statement} | extra


def _jsonl(tmp_path: Path, lines: list[object]) -> Path:
    path = tmp_path / "problems.jsonl"
    text = "\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines)
    path.write_text(text + "\n", encoding="utf-8")
    return path


def test_bad_records_are_skipped_with_line_and_field(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path,
        [
            _record("aime_1983_p1"),
            "{not json",
            _record("amc12a_2019_p21", formal_statement="theorem t : 1 = 1"),
            {"name": "imo_1959_p1", "split": "test", "header": HEADER},
            [1, 2],
            "",
            _record("aime_1983_p1", split="valid"),
            _record("mathd_algebra_10", header=3),
        ],
    )
    result = load_problems(path)
    assert [p.name for p in result.problems] == ["aime_1983_p1"]
    faults = [str(p) for p in result.skipped]
    assert faults == [
        "line 2: not valid JSON (Expecting property name enclosed in double quotes, column 2)",
        "line 3 (amc12a_2019_p21): formal_statement: must end with ':= by' (optionally + 'sorry')",
        "line 4 (imo_1959_p1): formal_statement: missing",
        "line 5: record: expected a JSON object, got list",
        "line 7 (aime_1983_p1): name: duplicate name (first seen on line 1, kept there)",
        "line 8 (mathd_algebra_10): header: expected a string, got int",
    ]


def test_trailing_sorry_is_dropped_and_signature_read() -> None:
    record = _record("t", formal_statement="theorem t (a : ℝ) :\n  a = a := by\n  sorry\n")
    (problem,) = read_records([(1, record)]).problems
    assert problem.formal_statement == "theorem t (a : ℝ) :\n  a = a := by"
    assert problem.signature == "theorem t (a : ℝ) :\n  a = a"


def test_hub_rows_take_their_split_from_the_hub() -> None:
    row = {k: v for k, v in _record("aime_1984_p1").items() if k != "split"}
    assert read_records([(1, row)]).skipped[0].field == "split"
    (problem,) = read_records([(1, row)], default_split="test").problems
    assert problem.split == "test"


def test_source_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SourceError, match="no such file"):
        load_problems(tmp_path / "missing.jsonl")
    with pytest.raises(SourceError, match="is a directory"):
        load_problems(tmp_path)
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    with pytest.raises(SourceError, match="offline mode is on"):
        load_problems("some-org/minif2f")


def _problems() -> list[Problem]:
    names = [
        ("aime_1983_p1", "test"),
        ("aimeI_2000_p7", "valid"),
        ("amc12a_2019_p21", "test"),
        ("imo_1959_p1", "test"),
        ("imosl_2007_algebra_p6", "test"),
        ("mathd_algebra_10", "test"),
        ("algebra_aime_style", "test"),
    ]
    return parse_jsonl("\n".join(json.dumps(_record(n, s)) for n, s in names)).problems


def _names(**kwargs: object) -> list[str]:
    return [p.name for p in select(_problems(), **kwargs)]  # type: ignore[arg-type]


def test_subset_selection() -> None:
    assert _names(subset="aime") == ["aime_1983_p1"]
    assert _names(subset="aime", split="valid") == ["aimeI_2000_p7"]
    assert _names(subset="aime", split=None) == ["aime_1983_p1", "aimeI_2000_p7"]
    assert _names(subset="imo") == ["imo_1959_p1", "imosl_2007_algebra_p6"]
    assert _names(subset="competition") == [
        "aime_1983_p1",
        "amc12a_2019_p21",
        "imo_1959_p1",
        "imosl_2007_algebra_p6",
    ]
    assert _names(subset="prefix:mathd") == ["mathd_algebra_10"]
    assert _names(subset="regex:aime") == ["aime_1983_p1", "algebra_aime_style"]
    assert _names(subset="regex:^a.*_p\\d+$") == ["aime_1983_p1", "amc12a_2019_p21"]
    assert _names(subset="all", limit=2) == ["aime_1983_p1", "amc12a_2019_p21"]


@pytest.mark.parametrize("subset", ["aimes", "prefix:", "regex:(", "name:aime"])
def test_bad_subset_is_named(subset: str) -> None:
    with pytest.raises(ValueError, match="subset"):
        select(_problems(), subset=subset)


def test_bad_limit() -> None:
    with pytest.raises(ValueError, match="limit"):
        select(_problems(), limit=0)


def test_reference_minif2f_counts(shared_data: SharedData) -> None:
    result = load_problems(shared_data("minif2f/minif2f_lean4.jsonl"))
    assert result.skipped == []
    assert len(result.problems) == 488
    assert len(select(result.problems, split="test")) == 244
    assert len(select(result.problems, split="test", subset="aime")) == 15  # the seed's 15
    assert len(select(result.problems, split="test", subset="competition")) == 80  # seed: 80
    assert len(select(result.problems, split="valid", subset="aime")) == 15
