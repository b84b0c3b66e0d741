"""Analyses count only what ran: a family with no scored sample is "not run", never a failure,
in ``ladder report``, ``report`` and ``compare``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalError, read_eval_log, write_eval_log
from typer.testing import CliRunner

from gapscope.app.main import app
from gapscope.ladder.task import oracle_ladder
from gapscope.models.scripted import script

runner = CliRunner(env={"COLUMNS": "400"})


@pytest.fixture(scope="module")
def one_family_ran(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished log of three bundled families in which only the first family's 8 probes
    ran (Inspect's ``limit``): the run metadata lists all three."""
    student = script("not-run-student", lambda messages: "The answer is \\boxed{0}.")
    task = oracle_ladder(families="bundled", k=1, limit=3, max_tokens=32)
    out = tmp_path_factory.mktemp("not-run")
    (log,) = inspect_eval(task, model=student, log_dir=str(out), display="none", limit=8)
    assert log.status == "success" and len(log.samples or []) == 8
    return Path(log.location)


def _envelope(args: list[str]) -> tuple[int, dict[str, object]]:
    result = runner.invoke(app, [*args, "--json"])
    return result.exit_code, json.loads(result.stdout)


def test_ladder_report_counts_only_the_family_that_ran(one_family_ran: Path) -> None:
    code, envelope = _envelope(["ladder", "report", str(one_family_ran)])
    assert code == 0, envelope["error"]
    (model,) = envelope["details"]["models"].values()  # type: ignore[attr-defined,index]
    assert model["n_families"] == 1 and model["families_not_run"] == 2
    assert sum(model["outcomes"].values()) == 1  # not 3 UNRECOVERED
    assert sum(model["gaps"].values()) <= 1
    assert all(t["families"] == 1 for t in model["specificity_tests"])
    notes = [str(n) for n in envelope["notes"]]  # type: ignore[attr-defined]
    assert any(
        "2 of 3 families were not run" in n and "not counted as failures" in n for n in notes
    )
    rows = envelope["summary"]
    assert isinstance(rows, list) and rows and all(r["n"] == 1 for r in rows)


def test_ladder_report_prints_how_many_families_were_not_run(one_family_ran: Path) -> None:
    result = runner.invoke(app, ["ladder", "report", str(one_family_ran)])
    assert result.exit_code == 0, result.output
    assert "(2 families not run)" in result.output
    assert "2 of 3 families were not run" in result.output


def test_report_counts_only_the_family_that_ran(one_family_ran: Path, tmp_path: Path) -> None:
    code, envelope = _envelope(["report", str(one_family_ran), "--out", str(tmp_path / "r.html")])
    assert code == 0, envelope["error"]
    rows = envelope["summary"]
    assert isinstance(rows, list) and rows and all(r["n"] == 1 for r in rows)


def _stopped(source: Path, out: Path) -> Path:
    """``source`` as a run stopped before its first score leaves it (cancelled, no samples)."""
    log = read_eval_log(str(source))
    log.status, log.samples, log.results = "cancelled", [], None
    log.eval.task_id = "a-stopped-run"
    out.parent.mkdir(parents=True, exist_ok=True)
    write_eval_log(log, str(out))
    return out


def test_compare_with_a_side_that_scored_nothing_says_so(
    one_family_ran: Path, tmp_path: Path
) -> None:
    stopped = _stopped(one_family_ran, tmp_path / "stopped" / "x.eval")
    for args in (
        [str(stopped), str(one_family_ran)],
        [str(stopped), str(one_family_ran), "--intersect"],
    ):
        code, envelope = _envelope(["compare", *args])
        assert code == 2
        error = str(envelope["error"])
        assert "no scored items on side A" in error and "status cancelled" in error
        assert "--intersect" not in error and "item sets differ" not in error


def test_a_report_over_an_unfinished_run_opens_with_it(
    one_family_ran: Path, tmp_path: Path
) -> None:
    stopped = _stopped(one_family_ran, tmp_path / "logs" / "stopped.eval")
    out = tmp_path / "r.html"
    code, envelope = _envelope(["report", str(stopped), str(one_family_ran), "--out", str(out)])
    assert code == 0, envelope["error"]
    page = out.read_text(encoding="utf-8")
    first = page[page.index("<h1>") : page.index("<h2>")]
    assert "standing unfinished" in first
    assert f"{stopped}: the run did not finish (status cancelled)" in first


def _errored(source: Path, out: Path, status: str) -> Path:
    """``source`` with every sample of its one family errored unscored (the scorer raised on
    the model's output), the run ending with ``status``."""
    log = read_eval_log(str(source))
    for sample in log.samples or []:
        sample.scores = None
        sample.error = EvalError(
            message="ValueError: scorer choked", traceback="", traceback_ansi=""
        )
    log.status = status  # type: ignore[assignment]
    out.parent.mkdir(parents=True, exist_ok=True)
    write_eval_log(log, str(out))
    return out


@pytest.mark.parametrize("status", ["error", "success"])
def test_a_family_whose_rollouts_errored_is_a_failure_not_a_family_not_run(
    one_family_ran: Path, tmp_path: Path, status: str
) -> None:
    errored = _errored(one_family_ran, tmp_path / "logs" / f"{status}.eval", status)
    code, envelope = _envelope(["ladder", "report", str(errored)])
    assert code == 0, envelope["error"]
    (model,) = envelope["details"]["models"].values()  # type: ignore[attr-defined,index]
    assert model["n_families"] == 1 and model["families_not_run"] == 2
    assert model["outcomes"]["UNRECOVERED"] == 1, model["outcomes"]
    notes = [str(n) for n in envelope["notes"]]  # type: ignore[attr-defined]
    assert any("8 rollouts of 1 families errored" in n and "scorer choked" in n for n in notes), (
        notes
    )
