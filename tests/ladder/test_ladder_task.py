"""The OracleLadder task end to end with a scripted student, then the report over its log."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessage
from typer.testing import CliRunner

from gapscope.analysis.ladder import build_report, model_run
from gapscope.cli import app
from gapscope.ladder.families import load_bundled
from gapscope.ladder.probes import Condition, build_probes
from gapscope.ladder.task import oracle_ladder, parse_conditions
from tests.conftest import script

LIMIT = 4


def _student(solves: set[Condition]) -> Callable[[list[ChatMessage]], str]:
    """A student that answers correctly exactly under the ``solves`` conditions."""
    families = load_bundled().families[:LIMIT]
    gold = {p.prompt: (p.condition, p.gold) for p in build_probes(families)}

    def reply(messages: list[ChatMessage]) -> str:
        condition, answer = gold[messages[-1].text]
        boxed = answer if condition in solves else "-987654321"
        return f"Let me think step by step.\nSo the result is \\boxed{{{boxed}}}."

    return reply


def _run(tmp_path: Path, name: str, solves: set[Condition], k: int = 2) -> EvalLog:
    model = script(name, _student(solves))
    log = inspect_eval(
        oracle_ladder(families="bundled", k=k, limit=LIMIT, verify_timeout=20),
        model=model,
        log_dir=str(tmp_path),
        display="none",
    )[0]
    assert log.status == "success", log.error
    return log


def test_milestone_execution_gap_student(tmp_path: Path) -> None:
    log = _run(tmp_path, "exec-gap", {Condition.S0, Condition.C3, Condition.C3_MISMATCHED})
    assert log.samples is not None
    n_probes = len(build_probes(load_bundled().families[:LIMIT]))
    assert len(log.samples) == 2 * n_probes  # k epochs of every probe
    report = build_report([model_run(log, "student")]).to_dict()
    student = report["models"]["student"]
    assert student["outcomes"] == {
        "DIRECT": 0,
        "ROADMAP-NEEDED": 0,
        "ANSWERS-NEEDED": LIMIT,
        "UNRECOVERED": 0,
    }
    assert student["gaps"]["milestone-execution"] == LIMIT
    assert student["milestone_pass_fraction"] == 1.0
    assert student["solved_by_condition"] == {
        "C1": 0,
        "C2": 0,
        "C3": LIMIT,
        "C2-random": 0,
        "C2-generic": 0,
        "C3-mismatched": LIMIT,
    }
    assert student["direct_accuracy"] == 0.0


def test_two_runs_report_transitions_and_stability(tmp_path: Path) -> None:
    composition = _run(tmp_path, "composer", {Condition.S0})
    direct = _run(tmp_path, "direct", {Condition.C1, Condition.S0})
    runner = CliRunner()
    result = runner.invoke(
        app,
        ["ladder", "report", composition.location, direct.location]
        + ["--names", "before,after", "--json", "--resamples", "200"],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)["details"]
    assert report["models"]["before"]["gaps"]["composition"] == LIMIT
    assert report["models"]["after"]["outcomes"]["DIRECT"] == LIMIT
    assert report["transition_matrix"]["UNRECOVERED"]["DIRECT"] == LIMIT
    pairs = {(s["a"], s["b"]): s["a_beats_b"] for s in report["ranking_stability"]}
    assert pairs[("after", "before")] == 1.0
    human = runner.invoke(app, ["ladder", "report", composition.location])
    assert human.exit_code == 0
    assert "composition" in human.output and "UNRECOVERED" in human.output


def test_condition_spec_errors_name_the_choices() -> None:
    assert parse_conditions("C1,S0") == (Condition.C1, Condition.S0)
    with pytest.raises(ValueError, match="unknown condition"):
        parse_conditions("C4")


def test_run_ladder_cli_prints_the_outcome_table_as_json(tmp_path: Path) -> None:
    model = script("cli-student", _student({Condition.C2, Condition.S0}))
    runner = CliRunner()
    args = ["run", "ladder", "--bundled", "--model", model, "-k", "1", "--limit", str(LIMIT)]
    result = runner.invoke(app, [*args, "--json", "--log-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    envelope = json.loads(result.stdout)
    student = envelope["details"]["models"][model]
    rows = {r["metric"]: r["value"] for r in envelope["summary"]}
    assert rows["outcome ROADMAP-NEEDED"] == 100.0 and rows["gap roadmap"] == 100.0
    assert student["outcomes"]["ROADMAP-NEEDED"] == LIMIT
    assert student["gaps"]["roadmap"] == LIMIT
    both = runner.invoke(app, ["run", "ladder", "--bundled", "--families", "x.jsonl"])
    assert both.exit_code == 2 and "exactly one of --families F or --bundled" in both.output
    missing = runner.invoke(app, ["run", "ladder", "--families", str(tmp_path / "none.jsonl")])
    assert missing.exit_code == 2
