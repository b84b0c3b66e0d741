"""OracleLadder's tables show only what was run: a threshold tau that k rollouts per probe
cannot reach has no row (at k = 1, tau 2..5 would each say "nothing solved"), and a condition
the run left out (``conditions=ladder``: no controls) is "not run", never "0 families solved"
(a reader would take that for help that never helped)."""

from __future__ import annotations

from rich.console import Console

from gapscope.analysis.ladder import ModelRun, Rollout, build_report
from gapscope.analysis.ladder_tables import print_ladder
from gapscope.ladder import Condition

LADDER_ONLY = (Condition.C1, Condition.C2, Condition.C3)
EVERY = (*LADDER_ONLY, Condition.C2_RANDOM, Condition.C2_GENERIC, Condition.C3_MISMATCHED)


def _run(name: str, k: int, conditions: tuple[Condition, ...]) -> ModelRun:
    """Two families; each condition run k times, correct on the first rollout only (so at
    tau = 1 every condition solves both families, and at tau = 2 none)."""
    rollouts = [
        Rollout(pid, c, None, i == 0) for pid in ("p", "q") for c in conditions for i in range(k)
    ]
    rollouts += [Rollout(pid, Condition.S0, 0, True) for pid in ("p", "q") for _ in range(k)]
    return ModelRun(name, f"{name}.eval", rollouts, {"p": 1, "q": 1})


def _printed(runs: list[ModelRun]) -> str:
    console = Console(width=250, record=True)
    print_ladder(build_report(runs), console)
    return console.export_text()


def test_k_1_has_one_threshold_row_and_k_3_three() -> None:
    report = build_report([_run("one", 1, EVERY), _run("three", 3, EVERY)]).to_dict()
    assert list(report["models"]["one"]["tau_sensitivity"]) == ["1"]
    assert list(report["models"]["three"]["tau_sensitivity"]) == ["1", "2", "3"]
    text = _printed([_run("one", 1, EVERY)])
    section = text[text.index("Threshold sensitivity") :]
    rows = [line for line in section.splitlines() if line.lstrip("│ ").startswith("one")]
    assert len(rows) == 1  # tau = 1 only, not tau 2..5 of zeros


def test_conditions_not_run_are_not_zero() -> None:
    ladder_only = _run("ladder-only", 1, LADDER_ONLY)
    report = build_report([ladder_only, _run("full", 1, EVERY)]).to_dict()
    assert report["models"]["ladder-only"]["solved_by_condition"] == {"C1": 2, "C2": 2, "C3": 2}
    assert report["models"]["full"]["solved_by_condition"]["C2-random"] == 2
    assert set(ladder_only.outcomes()) == {"solved C1", "solved C2", "solved C3"}  # compare too
    text = _printed([ladder_only, _run("full", 1, EVERY)])
    section = text[text.index("Families solved per condition") :]
    (row,) = [line for line in section.splitlines() if "ladder-only" in line][:1]
    assert row.count("not run") == 3 and " 0 " not in row
