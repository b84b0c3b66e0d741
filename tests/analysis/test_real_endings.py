"""A study stopped for real, read as a researcher reads it: a Ctrl-C (SIGINT to ``gapscope
profile`` in a child process) and an endpoint killed (SIGKILL to the server process) while
all 16 OracleLadder rollouts are in flight. Inspect leaves every rollout in the log with
``CancelledError`` or ``RetryError(APIConnectionError)``: the model answered none, so it has
no OracleLadder rate (not ``UNRECOVERED 100 %``), and ``profile``, ``report`` and ``--json``
say the same note."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gapscope.app.main import app
from tests.real_runs import StoppedStudy, endpoint_killed_study, interrupted_study

runner = CliRunner(env={"COLUMNS": "400"})


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory: pytest.TempPathFactory) -> StoppedStudy:
    return interrupted_study(tmp_path_factory.mktemp("ctrl-c"))


@pytest.fixture(scope="module")
def killed(tmp_path_factory: pytest.TempPathFactory) -> StoppedStudy:
    return endpoint_killed_study(tmp_path_factory.mktemp("killed"))


def _report(study: StoppedStudy, out: Path) -> dict[str, Any]:
    result = runner.invoke(app, ["report", str(study.log_dir), "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    envelope: dict[str, Any] = json.loads(result.stdout)
    return envelope


def _ladder_rows(envelope: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in envelope["summary"] or [] if r["diagnostic"] == "OracleLadder"]


def _the_note(notes: list[str], words: str) -> str:
    (note,) = [n for n in notes if words in n]
    return note


def test_ctrl_c_leaves_no_ladder_row_and_one_note_everywhere(
    interrupted: StoppedStudy, tmp_path: Path
) -> None:
    assert interrupted.exit_code == 130
    profiled = interrupted.envelope
    assert profiled["status"] == "interrupted"
    report = _report(interrupted, tmp_path / "r.html")
    for envelope in (profiled, report):
        assert _ladder_rows(envelope) == []  # not "outcome UNRECOVERED 100.0 (n=2)"
    said = _the_note(profiled["notes"], "16 rollouts cancelled, not scored")
    assert said == _the_note(report["notes"], "16 rollouts cancelled, not scored")
    for page in (interrupted.log_dir / "report.html", tmp_path / "r.html"):
        html = page.read_text(encoding="utf-8")
        assert "16 rollouts cancelled, not scored" in html and "UNRECOVERED" not in html
    first = (tmp_path / "r.html").read_text(encoding="utf-8").split("<h2>")[0]
    assert "16 rollouts cancelled, not scored" in first  # in the banner, not only the notes
    assert not any("count as failures" in n for n in report["notes"])


def test_an_endpoint_killed_mid_run_is_no_failure_of_the_model(
    killed: StoppedStudy, tmp_path: Path
) -> None:
    assert killed.exit_code == 1 and killed.envelope["status"] == "run_failed"
    report = _report(killed, tmp_path / "r.html")
    assert _ladder_rows(report) == [] and _ladder_rows(killed.envelope) == []
    words = "16 rollouts cut off from the endpoint (connection error), not scored"
    assert _the_note(killed.envelope["notes"], words) == _the_note(report["notes"], words)
    assert "APIConnectionError" in _the_note(report["notes"], words)  # the first error
    gone = (
        f"endpoint gone: {killed.url} stopped answering; 16 samples of oracle_ladder could not "
        "reach it (connection error): restart it, then rerun"
    )
    assert killed.envelope["details"]["ending"]["endpoints_gone"] == [gone]
    standing = (killed.log_dir / "report.html").read_text(encoding="utf-8")
    assert gone in standing[: standing.index("<h2>")]  # one line, in the report's first lines


def test_ladder_report_of_the_interrupted_log_has_no_family(interrupted: StoppedStudy) -> None:
    (log,) = interrupted.log_dir.glob("*oracle-ladder*.eval")
    result = runner.invoke(app, ["ladder", "report", str(log), "--json"])
    assert result.exit_code == 2
    error = str(json.loads(result.stdout)["error"])
    assert "no family to report" in error and "16 rollouts cancelled, not scored" in error
