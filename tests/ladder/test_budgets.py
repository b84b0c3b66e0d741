"""Decoding-budget sensitivity (Table 22): each model's ladder at two max_tokens."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from typer.testing import CliRunner

from gapscope.analysis.ladder import ModelRun, Rollout
from gapscope.analysis.ladder_budgets import (
    BudgetError,
    BudgetRun,
    compare_budgets,
)
from gapscope.app.main import app
from gapscope.ladder.probes import Condition
from gapscope.ladder.task import oracle_ladder
from gapscope.models.scripted import script
from tests.ladder.test_ladder_task import LIMIT, _student


def _run(name: str, solved: dict[str, Condition | None]) -> ModelRun:
    """One rollout per condition of each family: correct from ``solved[pid]`` up the ladder
    (None: at no level); every milestone solved alone."""
    ladder = (Condition.C1, Condition.C2, Condition.C3)
    rollouts = []
    for pid, first in solved.items():
        level = ladder.index(first) if first is not None else len(ladder)
        rollouts += [Rollout(pid, c, None, i >= level) for i, c in enumerate(ladder)]
        rollouts.append(Rollout(pid, Condition.S0, 0, True))
    return ModelRun(name, f"{name}.eval", rollouts, dict.fromkeys(solved, 1))


def test_each_model_at_both_budgets_with_change_and_rank() -> None:
    c1, c2, c3 = Condition.C1, Condition.C2, Condition.C3
    runs = [
        BudgetRun("strong", 4096, _run("strong", {"p": c1, "q": c2, "r": None})),
        BudgetRun("strong", 16384, _run("strong", {"p": c1, "q": c1, "r": c3})),
        BudgetRun("weak", 4096, _run("weak", {"p": c1, "q": c3, "r": c2})),
        BudgetRun("weak", 16384, _run("weak", {"p": c2, "q": None, "r": None})),
    ]
    table = compare_budgets(runs).to_dict()
    assert (table["low_max_tokens"], table["high_max_tokens"]) == (4096, 16384)
    models = table["models"]
    assert isinstance(models, dict)
    strong, weak = models["strong"], models["weak"]
    assert strong["low"] == {
        "DIRECT": 1,
        "ROADMAP-NEEDED": 1,
        "ANSWERS-NEEDED": 0,
        "any_probe": 2,
        "n_families": 3,
    }
    assert strong["high"]["DIRECT"] == 2 and strong["high"]["any_probe"] == 3
    assert (strong["any_probe_change"], weak["any_probe_change"]) == (1, -2)
    # 4K: weak solves all 3, strong 2; 16K: strong 3, weak 1 - the ranking flips
    assert (weak["any_probe_rank_low"], strong["any_probe_rank_low"]) == (1, 2)
    assert (strong["any_probe_rank_high"], weak["any_probe_rank_high"]) == (1, 2)


@pytest.mark.parametrize(
    ("budgets", "message"),
    [
        ((4096, 4096), "need runs at exactly two budgets, got max_tokens \\[4096\\]"),
        ((4096, 8192, 16384), "exactly two budgets, got max_tokens \\[4096, 8192, 16384\\]"),
    ],
)
def test_runs_must_come_at_two_budgets(budgets: tuple[int, ...], message: str) -> None:
    runs = [BudgetRun(f"m{i}", b, _run(f"m{i}", {"p": None})) for i, b in enumerate(budgets)]
    with pytest.raises(BudgetError, match=message):
        compare_budgets(runs)


def test_every_model_needs_one_run_at_each_budget_over_the_same_families() -> None:
    one = _run("m", {"p": None})
    other = _run("m", {"q": None})
    with pytest.raises(BudgetError, match="m: two runs at max_tokens 4096"):
        compare_budgets([BudgetRun("m", 4096, one)] * 2 + [BudgetRun("n", 16384, one)])
    with pytest.raises(BudgetError, match="n: no run at max_tokens 4096"):
        compare_budgets(
            [BudgetRun("m", 4096, one), BudgetRun("m", 16384, one), BudgetRun("n", 16384, one)]
        )
    with pytest.raises(BudgetError, match="m: its 4096- and 16384-token runs are over other"):
        compare_budgets([BudgetRun("m", 4096, one), BudgetRun("m", 16384, other)])


def test_the_cli_reads_each_logs_budget(tmp_path: Path) -> None:
    logs = []
    for max_tokens, solves in ((64, {Condition.C2, Condition.S0}), (128, {Condition.C1})):
        model = script(f"budget-{max_tokens}", _student(solves))
        task = oracle_ladder(
            families="bundled", k=1, conditions="ladder", limit=LIMIT, max_tokens=max_tokens
        )
        log = inspect_eval(task, model=model, log_dir=str(tmp_path), display="none")[0]
        assert log.status == "success", log.error
        logs.append(log.location)
    args = ["ladder", "budgets", *logs, "--names", "student,student", "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    student = json.loads(result.stdout)["details"]["models"]["student"]
    assert student["low"]["ROADMAP-NEEDED"] == LIMIT and student["high"]["DIRECT"] == LIMIT
    assert student["any_probe_change"] == 0
    unnamed = CliRunner().invoke(app, ["ladder", "budgets", *logs, "--json"])
    assert unnamed.exit_code != 0
    assert "no run at max_tokens" in json.loads(unnamed.stdout)["error"]
