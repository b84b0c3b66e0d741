"""The seed's Table 1 readout: three presets, ours beside the published DeepSeek-Prover-V2-7B."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from gapscope.analysis.s2b import S2BRunSummary
from gapscope.analysis.s2b_table1 import TABLE1_PRESETS, print_table1, table1
from gapscope.app.main import app
from gapscope.s2b.metrics import SeedSummary


def _run(preset: str, zsct: SeedSummary, label: str = "m", role: str = "listener") -> S2BRunSummary:
    return S2BRunSummary(
        preset=preset,
        listener="lm",
        model=label,
        log_location=f"{preset}.eval",
        status="success",
        per_seed=[],
        summary={"zsct": zsct, "adj_zsct": zsct.adjusted()},
        query={},
        role=role,
    )


def test_the_paper_rows_and_their_published_values() -> None:
    # seeds/000, Table 1: 57.9 / 15.8, 40.0 / 0, 87.0 / 74.0 (DeepSeek-Prover-V2-7B, 4 seeds)
    rows = table1([])
    assert TABLE1_PRESETS == ("scs-0shot", "cat-0shot", "cat-10shot")
    published = [(r.published.zsct, r.published.adj_zsct) for r in rows]
    assert published == [(57.9, 15.8), (40.0, 0.0), (87.0, 74.0)]
    # adj-ZSCT = max(0, 2 ZSCT - 100): the published pairs agree with the definition
    assert all(round(max(0.0, 2 * z - 100), 1) == a for z, a in published)
    assert all(r.zsct is None and r.seeds == 0 for r in rows)  # nothing run


def test_ours_sit_beside_the_published_in_the_papers_order() -> None:
    runs = [
        _run("cat-10shot", SeedSummary.of([90.0, 80.0])),  # mean 85, sd 7.07
        _run("scs-0shot", SeedSummary.of([60.0, 50.0, 55.0, 55.0])),  # mean 55
    ]
    rows = table1(runs)
    assert [r.published.preset for r in rows] == ["scs-0shot", "cat-0shot", "cat-10shot"]
    scs, cat0, cat10 = (r.to_dict() for r in rows)
    assert scs["seeds"] == 4 and scs["zsct"]["mean"] == pytest.approx(55.0)
    assert scs["adj_zsct"]["mean"] == pytest.approx(10.0)  # 2 * 55 - 100
    assert cat0["zsct"] is None and cat0["log"] is None
    assert cat10["zsct"] == pytest.approx({"mean": 85.0, "sd": 50**0.5})
    assert cat10["adj_zsct"] == pytest.approx({"mean": 70.0, "sd": 2 * 50**0.5})
    assert cat10["published"] == {"zsct": 87.0, "adj_zsct": 74.0}
    console = Console(record=True, width=250)
    print_table1(rows, "m", console)
    text = console.export_text()
    assert "85.0 ± 7.1" in text and "70.0 ± 14.1" in text and "not run" in text
    assert "87.0" in text and "74.0" in text and "S2B-LM (categorical + 10-shot CoT)" in text


def test_runs_that_are_not_one_listeners_configurations_are_refused() -> None:
    half = SeedSummary.of([50.0])
    with pytest.raises(ValueError, match="listener table"):
        table1([_run("scs-0shot", half, role="speaker")])
    with pytest.raises(ValueError, match="one listener's runs"):
        table1([_run("scs-0shot", half, "a"), _run("cat-0shot", half, "b")])
    with pytest.raises(ValueError, match="two runs of preset 'cat-0shot'"):
        table1([_run("cat-0shot", half), _run("cat-0shot", half)])


def test_run_s2b_table1_runs_the_three_presets_in_one_command(tmp_path: Path) -> None:
    # The corrupted listener is wrong on every query game, whatever the stimuli: 0 everywhere.
    result = CliRunner().invoke(
        app,
        [
            *("run", "s2b", "--table1", "--listener", "corrupted", "--seeds", "1"),
            *("--log-dir", str(tmp_path), "--json"),
        ],
    )
    assert result.exit_code == 0, result.output
    envelope = json.loads(result.stdout)
    assert len(envelope["logs"]) == 3
    table = envelope["details"]["table1"]
    assert [row["preset"] for row in table] == list(TABLE1_PRESETS)
    assert all(row["zsct"] == {"mean": 0.0, "sd": 0.0} and row["seeds"] == 1 for row in table)
    assert [row["published"]["zsct"] for row in table] == [57.9, 40.0, 87.0]
    assert {row["metric"] for row in envelope["summary"]} >= {f"ZSCT [{p}]" for p in TABLE1_PRESETS}


def test_table1_refuses_the_speaker_role(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        ["run", "s2b", "--table1", "--role", "speaker", "--speaker", "rule"]
        + ["--log-dir", str(tmp_path)],
    )
    assert result.exit_code == 2
    assert "--table1 is the listener's table" in result.output
