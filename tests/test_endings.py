"""Truthful endings: ``profile`` and ``run`` decide their exit code from the status of the logs
they wrote (not from Inspect's success flag), say what finished and what a rerun does, and a
rerun finishes what was cut off."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import ChatMessage
from typer.testing import CliRunner

from gapscope.app.main import app
from gapscope.models.scripted import script

runner = CliRunner()


def _answer(messages: list[ChatMessage]) -> str:
    last = messages[-1].text
    return "Answer: same" if "Game " in last or "Sync round" in last else "\\boxed{1}"


class CtrlC:
    """A model the user interrupts: the ``at``-th OracleLadder call raises KeyboardInterrupt,
    as Ctrl-C does inside a model call."""

    def __init__(self, at: int | None) -> None:
        self.at = at
        self.ladder_calls = 0

    def __call__(self, messages: list[ChatMessage]) -> str:
        reply = _answer(messages)
        if reply.startswith("Answer"):
            return reply
        self.ladder_calls += 1
        if self.at is not None and self.ladder_calls == self.at:
            raise KeyboardInterrupt
        return reply


def _profile(model: str, log_dir: Path, *extra: str) -> tuple[int, dict[str, Any], str]:
    args = ["profile", "--model", model, "--budget", "quick", "--diagnostics", "s2b,ladder"]
    result = runner.invoke(
        app, [*args, "--log-dir", str(log_dir), "--retry-attempts", "0", "--json", *extra]
    )
    assert result.stdout, result.output
    return result.exit_code, json.loads(result.stdout), result.output


def _headers(log_dir: Path) -> dict[str, str]:
    from inspect_ai.log import read_eval_log

    return {p.name: read_eval_log(str(p), header_only=True).status for p in log_dir.glob("*.eval")}


def test_ctrl_c_during_a_profile_exits_130_and_a_rerun_finishes_it(tmp_path: Path) -> None:
    stop = CtrlC(at=3)
    model = script("end-ctrl-c", stop)
    code, envelope, output = _profile(model, tmp_path)
    assert code == 130 and envelope["status"] == "interrupted"
    assert "successfully" not in output  # Inspect's "Completed all tasks ... successfully"
    error = str(envelope["error"])
    assert error.startswith("interrupted: ") and "rerun the same command to finish it" in error
    assert "finished tasks are skipped" in error and "unfinished ones resume" in error
    ending = envelope["details"]["ending"]
    assert not ending["complete"] and ending["unfinished"]
    assert set(ending["unfinished"].values()) <= {"cancelled", "error", "started"}
    report = (tmp_path / "report.html").read_text(encoding="utf-8")
    first = report[report.index("<h1>") : report.index("<h2>")]
    assert "standing unfinished" in first and "interrupted: " in first
    assert "oracle_ladder on scripted/end-ctrl-c" in first  # the model with no row is named

    stop.at = None  # the user runs the same command again
    code, envelope, output = _profile(model, tmp_path)
    assert code == 0, envelope["error"]
    assert envelope["details"]["ending"]["complete"]
    assert not envelope["details"]["ending"]["unfinished"]
    assert len(envelope["details"]["ending"]["finished"]) == 8  # 3 model tasks + 5 references
    assert "all 8 tasks finished" in (tmp_path / "report.html").read_text(encoding="utf-8")


def _cancel_the_ladder_log(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``eval_set`` do what it did after a real Ctrl-C: return success (and print
    "Completed all tasks ... successfully") over a log it left cancelled, 3 samples scored."""
    import inspect_ai
    from inspect_ai.log import read_eval_log, write_eval_log

    real = inspect_ai.eval_set

    def cancels_one(*args: Any, **kwargs: Any) -> tuple[bool, list[Any]]:
        success, logs = real(*args, **kwargs)
        (ladder,) = Path(kwargs["log_dir"]).glob("*oracle-ladder*.eval")
        log = read_eval_log(str(ladder))
        log.status, log.samples, log.results = "cancelled", (log.samples or [])[:3], None
        write_eval_log(log, str(ladder))
        return success, logs

    monkeypatch.setattr(inspect_ai, "eval_set", cancels_one)


def test_cancelled_logs_are_an_interrupt_whatever_eval_set_returned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _cancel_the_ladder_log(monkeypatch)
    code, envelope, output = _profile(script("end-cancelled", _answer), tmp_path)
    assert code == 130 and envelope["status"] == "interrupted", envelope["error"]
    assert "Completed all tasks" not in output
    assert "7 of 8 tasks finished, 1 did not" in str(envelope["error"])
    assert "their 3 scored samples are kept" in str(envelope["error"])
    assert list(envelope["details"]["ending"]["unfinished"].values()) == ["cancelled"]


def test_the_printed_summary_opens_with_what_did_not_finish(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _cancel_the_ladder_log(monkeypatch)
    model = script("end-printed", _answer)
    args = ["profile", "--model", model, "--budget", "quick", "--diagnostics", "s2b,ladder"]
    result = runner.invoke(app, [*args, "--log-dir", str(tmp_path), "--retry-attempts", "0"])
    assert result.exit_code == 130
    lines = result.stdout.splitlines()
    assert lines[0] == "interrupted: 7 of 8 tasks finished, 1 did not"
    assert lines[1].startswith(f"not finished: oracle_ladder on {model}: cancelled, 3 of 16")
    assert lines[2].startswith("rerun the same command to finish it")
    assert "successfully" not in result.output
    glance, profile = result.stdout.index("At a glance"), result.stdout.index("Gap profile")
    assert lines[3].strip().startswith("At a glance") and glance < profile  # the first table


def test_a_task_that_errored_exits_1_with_the_rerun_line(tmp_path: Path) -> None:
    def broken(messages: list[ChatMessage]) -> str:
        if _answer(messages).startswith("Answer"):
            return "Answer: same"
        raise RuntimeError("server unavailable")

    code, envelope, _ = _profile(script("end-error", broken), tmp_path)
    assert code == 1 and envelope["status"] == "run_failed"
    error = str(envelope["error"])
    assert error.startswith("did not finish: 7 of 8 tasks finished, 1 did not")
    assert "rerun the same command to finish it" in error
    assert list(_headers(tmp_path).values()).count("error") == 1


def test_profile_with_a_missing_lean_dir_is_one_line_exit_2(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        [
            "profile",
            "--lean",
            f"local:{tmp_path / 'MISSING'}",
            "--budget",
            "quick",
            "--dry-run",
            "--log-dir",
            str(tmp_path / "logs"),
        ],
    )
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "MISSING" in errors[0]
    assert "Traceback" not in result.output


def _run_ladder(model: str, log_dir: Path) -> tuple[int, dict[str, Any]]:
    args = ["run", "ladder", "--bundled", "--model", model, "--limit", "2", "-k", "1"]
    result = runner.invoke(app, [*args, "--log-dir", str(log_dir), "--json"])
    assert result.stdout, result.output
    return result.exit_code, json.loads(result.stdout)


def test_a_run_interrupted_exits_130_and_rerunning_it_resumes(tmp_path: Path) -> None:
    stop = CtrlC(at=5)
    model = script("end-run", stop)
    code, envelope = _run_ladder(model, tmp_path)
    assert code == 130 and envelope["status"] == "interrupted", envelope["error"]
    error = str(envelope["error"])
    assert "rerun the same command to resume it" in error
    (log,) = envelope["logs"]
    kept = int(re.search(r"its (\d+) scored samples are kept", error).group(1))  # type: ignore[union-attr]
    stop.at, stop.ladder_calls = None, 0
    code, envelope = _run_ladder(model, tmp_path)
    assert code == 0, envelope["error"]
    total = 16  # 2 bundled families x 8 probes, k = 1
    assert stop.ladder_calls == total - kept  # the scored samples were not asked again
    assert envelope["logs"] != [log]


def test_a_run_whose_log_errored_exits_1_and_rerunning_it_resumes(tmp_path: Path) -> None:
    calls = {"n": 0, "fail": True}

    def flaky(messages: list[ChatMessage]) -> str:
        calls["n"] += 1
        if calls["fail"] and calls["n"] == 3:
            raise RuntimeError("server unavailable")
        return _answer(messages)

    model = script("end-run-error", flaky)
    code, envelope = _run_ladder(model, tmp_path)
    assert code == 1 and envelope["status"] == "run_failed"
    error = str(envelope["error"])
    assert error.startswith("run error: ") and "rerun the same command to resume it" in error
    calls.update(n=0, fail=False)
    code, envelope = _run_ladder(model, tmp_path)
    assert code == 0, envelope["error"]
    assert 0 < calls["n"] < 16  # only what the errored run did not score is asked again


def test_a_resume_that_fails_partway_ends_unfinished_and_does_not_start_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failure inside ``eval_retry`` after its log exists is the run's failure, not a task
    that cannot be rebuilt: the run must not start over (a second log, samples asked again)."""
    import inspect_ai

    stop = CtrlC(at=5)
    model = script("end-retry-fails", stop)
    code, envelope = _run_ladder(model, tmp_path)
    assert code == 130
    kept = int(re.search(r"its (\d+) scored samples are kept", str(envelope["error"])).group(1))  # type: ignore[union-attr]
    real = inspect_ai.eval_retry

    def fails_partway(*args: Any, **kwargs: Any) -> Any:
        real(*args, **kwargs)  # writes the continued log, then the run breaks
        raise RuntimeError("log store went away")

    monkeypatch.setattr(inspect_ai, "eval_retry", fails_partway)
    stop.at, stop.ladder_calls = None, 0
    code, envelope = _run_ladder(model, tmp_path)
    assert code == 1 and envelope["status"] == "run_failed", envelope["error"]
    error = str(envelope["error"])
    assert error.startswith("run error: ") and "log store went away" in error
    assert "rerun the same command to resume it" in error
    assert len(list(tmp_path.glob("*.eval"))) == 2  # the interrupted log and its retry only
    assert stop.ladder_calls == 16 - kept  # the retry's asks only: no start over


def test_a_log_whose_task_cannot_be_rebuilt_starts_the_run_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """eval_retry failing before it writes anything (the task is not in Inspect's registry)
    is the one failure that starts over, and the user is told."""
    import inspect_ai

    stop = CtrlC(at=5)
    model = script("end-retry-rebuild", stop)
    assert _run_ladder(model, tmp_path)[0] == 130

    def cannot_rebuild(*args: Any, **kwargs: Any) -> Any:
        raise ValueError("task oracle_ladder not found in the registry")

    monkeypatch.setattr(inspect_ai, "eval_retry", cannot_rebuild)
    stop.at, stop.ladder_calls = None, 0
    result = runner.invoke(
        app,
        ["run", "ladder", "--bundled", "--model", model, "--limit", "2", "-k", "1"]
        + ["--log-dir", str(tmp_path), "--json"],
    )
    assert result.exit_code == 0, result.output
    assert "cannot resume" in result.output and "starting the run over" in result.output
    assert stop.ladder_calls == 16 and len(list(tmp_path.glob("*.eval"))) == 2
