"""Runs that did not finish: unscored samples count nowhere, the status and what was left out
are said, and a retry supersedes the run it resumed."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from inspect_ai.log import EvalLog, read_eval_log, write_eval_log
from typer.testing import CliRunner

from gapscope.app.main import app

runner = CliRunner(env={"COLUMNS": "400"})


def _derived(source: Path, out: Path, *, keep: int, task_id: str | None = None) -> Path:
    """A copy of a finished log as Ctrl-C leaves it: cancelled, with its first ``keep``
    samples, created a minute before ``source`` (so ``source`` is its retry when the task id
    is kept)."""
    log: EvalLog = read_eval_log(str(source))
    log.status = "cancelled"
    log.samples = (log.samples or [])[:keep]
    log.results = None
    log.eval.created = (datetime.fromisoformat(log.eval.created) - timedelta(minutes=1)).isoformat()
    if task_id is not None:
        log.eval.task_id = task_id
    out.parent.mkdir(parents=True, exist_ok=True)
    write_eval_log(log, str(out))
    return out


@pytest.fixture
def ladder_log(logs: dict[str, Path]) -> Path:
    return logs["ladder"]


def _envelope(args: list[str]) -> tuple[int, dict[str, object]]:
    result = runner.invoke(app, [*args, "--json"])
    return result.exit_code, json.loads(result.stdout)


def test_ladder_report_of_a_run_stopped_before_any_score_reports_nothing(
    ladder_log: Path, tmp_path: Path
) -> None:
    stopped = _derived(ladder_log, tmp_path / "stopped.eval", keep=0, task_id="another-run")
    code, envelope = _envelope(["ladder", "report", str(stopped)])
    assert code == 2
    error = str(envelope["error"])
    assert "no family to report" in error and "status cancelled" in error
    assert "16 rollouts not started, not scored" in error


def test_a_partial_run_counts_only_its_finished_families_and_says_so(
    ladder_log: Path, tmp_path: Path
) -> None:
    # the bundled families of the fixture have 8 probes each: keep the first family whole
    # and one probe of the second
    partial = _derived(ladder_log, tmp_path / "partial.eval", keep=9, task_id="another-run")
    code, envelope = _envelope(["ladder", "report", str(partial)])
    assert code == 0, envelope
    (model,) = envelope["details"]["models"].values()  # type: ignore[index]
    assert model["n_families"] == 1 and model["status"] == "cancelled"
    notes = envelope["notes"]
    assert isinstance(notes, list) and len(notes) == 3
    assert "did not finish (status cancelled); rerun the same command" in notes[0]
    assert notes[1].endswith("7 rollouts not started, not scored")
    assert "1 of 2 families have a rollout the model never answered (not started)" in notes[2]
    rows = envelope["summary"]
    assert isinstance(rows, list) and rows
    assert all(r["n"] == 1 and r["status"] == "cancelled" for r in rows)
    assert all(r["unanswered"] == "1 family not started" for r in rows)
    direct = next(r for r in rows if r["metric"] == "outcome DIRECT")
    low, high = direct["bounds"]  # the family left out failed, or passed
    assert (low, high) == (direct["value"] / 2, (direct["value"] + 100) / 2)


def test_report_puts_the_unanswered_families_and_bounds_on_each_cell(
    ladder_log: Path, tmp_path: Path
) -> None:
    partial = _derived(ladder_log, tmp_path / "runs" / "partial.eval", keep=9, task_id="other")
    out = tmp_path / "r.html"
    result = runner.invoke(app, ["report", str(partial), "--out", str(out)])
    assert result.exit_code == 0, result.output
    said = "1 family not started, not scored: "
    assert said in result.output  # the terminal table's cells
    page = out.read_text(encoding="utf-8")
    start = page.index('<table class="profile">')
    cells = page[start : page.index("</table>", start)]
    assert cells.count(f'<span class="unanswered">{said}') == 10  # every OracleLadder cell
    assert "if all failed" in cells and "if passed" in cells


def test_report_leaves_out_a_stopped_run_beside_the_real_one(
    ladder_log: Path, tmp_path: Path
) -> None:
    runs = tmp_path / "runs"
    stopped = _derived(ladder_log, runs / "stopped.eval", keep=0, task_id="another-run")
    (runs / ladder_log.name).write_bytes(ladder_log.read_bytes())
    code, envelope = _envelope(["report", str(runs), "--out", str(tmp_path / "r.html")])
    assert code == 0, envelope
    rows = envelope["summary"]
    assert isinstance(rows, list) and rows
    assert {(r["n"], r["status"]) for r in rows} == {(2, "success")}  # no 0-of-0 or 26-of-26
    assert any(str(stopped) in n and "did not finish" in n for n in envelope["notes"])  # type: ignore[union-attr]
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "did not finish" in page


def test_a_retry_supersedes_the_cancelled_run_it_resumed(ladder_log: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    original = _derived(ladder_log, runs / "original.eval", keep=9)  # same task id
    retry = runs / ladder_log.name
    retry.write_bytes(ladder_log.read_bytes())
    code, envelope = _envelope(["report", str(runs), "--out", str(tmp_path / "r.html")])
    assert code == 0, envelope
    assert envelope["logs"] == [str(retry)]
    rows = envelope["summary"]
    assert isinstance(rows, list)
    assert len(rows) == len({r["metric"] for r in rows}) and {r["n"] for r in rows} == {2}
    assert f"{original} (cancelled) is superseded by its retry {retry}" in envelope["notes"]  # type: ignore[operator]
    code, compared = _envelope(["compare", str(runs), str(retry)])
    assert code == 0, compared  # the original's families are not "in two logs"
    assert any("superseded" in n for n in compared["notes"])  # type: ignore[union-attr]
