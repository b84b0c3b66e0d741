"""Teacher and granularity agreement (Appendix P): by hand on counts, then ``ladder agree`` on
a scripted student's logs over two family sets of the same problems."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessage
from typer.testing import CliRunner

from gapscope.app.main import app
from gapscope.ladder.agreement import run_agreement
from gapscope.ladder.families import Family, load_bundled
from gapscope.ladder.probes import Condition, build_probes
from gapscope.ladder.schema import MilestoneType
from gapscope.ladder.task import oracle_ladder
from gapscope.ladder.taxonomy import FamilyCounts, Gap, MilestoneTest, gap, passes_stage0
from gapscope.models.scripted import script


def test_the_half_milestone_test_passes_at_half_and_not_below() -> None:
    at_half = FamilyCounts("f", 0, 0, 0, (1, 1, 0, 0))
    below = FamilyCounts("f", 0, 0, 0, (1, 0, 0, 0))
    assert passes_stage0(at_half, test=MilestoneTest.HALF)
    assert not passes_stage0(at_half)
    assert not passes_stage0(below, test=MilestoneTest.HALF)
    assert gap(at_half, test=MilestoneTest.HALF) is Gap.COMPOSITION
    assert gap(at_half) is Gap.CAPABILITY
    assert not passes_stage0(FamilyCounts("f", 0, 0, 0, ()), test=MilestoneTest.HALF)


A = [
    FamilyCounts("p1", 0, 1, 1, (1, 1)),  # roadmap; at least half: roadmap
    FamilyCounts("p2", 0, 0, 1, (1, 0)),  # missing-milestone; half: milestone-execution
    FamilyCounts("p3", 0, 0, 0, (1, 1)),  # composition; half: composition
    FamilyCounts("p4", 2, 2, 2, (1, 1)),  # DIRECT
    FamilyCounts("p5", 0, 0, 0, (0, 0)),  # capability; half: capability
    FamilyCounts("pa", 0, 0, 0, (1, 1)),
]
B = [  # a finer roadmap: four milestones where A has two (p4: two)
    FamilyCounts("p1", 0, 1, 0, (1, 1, 0, 1)),  # missing-milestone; half: roadmap
    FamilyCounts("p2", 0, 0, 1, (1, 1, 0, 0)),  # missing-milestone; half: milestone-execution
    FamilyCounts("p3", 0, 0, 0, (1, 0, 0, 0)),  # capability; half: capability
    FamilyCounts("p4", 0, 2, 2, (1, 1)),  # roadmap
    FamilyCounts("p5", 0, 1, 1, (0, 0, 1, 1)),  # missing-milestone; half: roadmap
    FamilyCounts("pb", 0, 0, 0, (1, 1)),
]


def test_outcome_label_and_milestone_agreement_by_hand() -> None:
    result = run_agreement(A, B)
    assert (result.only_a, result.only_b) == (("pa",), ("pb",))
    outcomes = {
        o.condition: (o.both, o.only_a, o.only_b, o.neither, o.agree) for o in result.outcomes
    }
    assert outcomes == {
        Condition.C1: (0, 1, 0, 4, 4),  # p4 solved directly in A only
        Condition.C2: (2, 0, 1, 2, 4),  # p1, p4 both; p5 in B only
        Condition.C3: (2, 1, 1, 1, 3),  # p2, p4 both; p1 A only; p5 B only; p3 neither
    }
    labels = {la.test: (la.labelled, la.agree, la.same_outcome) for la in result.labels}
    # p4 is DIRECT in A: no label. Strict: only p2 agrees; p1 and p3 differ with the same
    # outcome, p5 with another. At least half: p1 and p2 agree; p3 same outcome, p5 not
    assert labels == {MilestoneTest.STRICT: (4, 1, 2), MilestoneTest.HALF: (4, 2, 1)}
    ms_a, ms_b = result.milestones
    assert (ms_a.tested, ms_a.passed, ms_a.mean_per_family) == (10, 7, 2.0)
    assert ms_a.fraction_passed == 0.7 and ms_a.mean_fraction_passed == 0.7
    assert (ms_b.tested, ms_b.passed, ms_b.mean_per_family) == (18, 10, 3.6)
    assert ms_b.fraction_passed == 10 / 18
    assert ms_b.mean_fraction_passed == (0.75 + 0.5 + 0.25 + 1 + 0.5) / 5
    (p1,) = [f for f in result.families if f.pid == "p1"]
    assert (p1.tested, p1.passed) == ((2, 4), (2, 3))
    assert p1.strict == (Gap.ROADMAP, Gap.MISSING_MILESTONE) and p1.half == (Gap.ROADMAP,) * 2


def _coarse(family: Family) -> Family:
    """The same problem with a one-milestone roadmap: its first tested milestone only."""
    first = family.tested_milestones[0]
    rest = tuple(m for m in family.milestones if m.type is MilestoneType.INTEGRATE)
    return dataclasses.replace(family, milestones=(first, *rest), milestone_gold_invalid=())


def test_ladder_agree_compares_two_runs_of_one_model(tmp_path: Path) -> None:
    fine = load_bundled().families[:2]
    coarse = [_coarse(f) for f in fine]
    paths = {}
    probes: dict[str, tuple[str, Condition, int | None, str]] = {}
    for name, fams in (("fine", fine), ("coarse", coarse)):
        paths[name] = tmp_path / f"{name}.jsonl"
        paths[name].write_text("".join(json.dumps(f.to_dict()) + "\n" for f in fams), "utf-8")
        for p in build_probes(fams, (Condition.C1, Condition.C2, Condition.C3, Condition.S0)):
            probes[p.prompt] = (f"{name}:{p.pid}", p.condition, p.milestone_index, p.gold)
    # solves the first milestone alone, not the second; C2 of every fine family but only of
    # the first coarse one; never C1 or C3
    solves = {f"fine:{f.pid}" for f in fine} | {f"coarse:{fine[0].pid}"}

    def reply(messages: list[ChatMessage]) -> str:
        where, condition, index, gold = probes[messages[-1].text]
        right = (condition is Condition.S0 and index == 0) or (
            condition is Condition.C2 and where in solves
        )
        return f"\\boxed{{{gold if right else '-987654321'}}}"

    model = script("agreeing-student", reply)
    logs = []
    for name in ("fine", "coarse"):
        task = oracle_ladder(families=str(paths[name]), k=1, conditions="ladder", verify_timeout=20)
        (log,) = inspect_eval(task, model=model, log_dir=str(tmp_path / name), display="none")
        assert log.status == "success", log.error
        logs.append(log.location)
    runner = CliRunner()
    result = runner.invoke(app, ["ladder", "agree", *logs, "--names", "fine,coarse", "--json"])
    assert result.exit_code == 0, result.output
    details = json.loads(result.stdout)["details"]
    assert details["matched_families"] == 2 and details["only_a"] == details["only_b"] == []
    outcomes = {
        o["condition"]: (o["agree"], o["both"], o["only_a"]) for o in details["outcome_agreement"]
    }
    assert outcomes == {"C1": (2, 0, 0), "C2": (1, 1, 1), "C3": (2, 0, 0)}
    # fine: both ROADMAP-NEEDED, Stage 0 1 of 2 (missing-milestone; at least half: roadmap);
    # coarse: the first ROADMAP-NEEDED (roadmap), the second UNRECOVERED (composition)
    labels = {
        la["milestone_test"]: (la["agree"], la["labelled"], la["disagree_same_outcome"])
        for la in details["label_agreement"]
    }
    assert labels == {"strict": (0, 2, 1), "half": (1, 2, 0)}
    assert details["milestones"]["fine"] == {
        "tested": 4,
        "passed": 2,
        "fraction_passed": 0.5,
        "mean_tested_per_family": 2.0,
        "mean_fraction_passed_per_family": 0.5,
    }
    assert details["milestones"]["coarse"]["fraction_passed"] == 1.0
    assert details["families"][0]["label_strict"] == ["missing-milestone", "roadmap"]
    human = runner.invoke(app, ["ladder", "agree", *logs])
    assert human.exit_code == 0 and "at least half" in human.output and "1/2" in human.output
    same = runner.invoke(app, ["ladder", "agree", *logs, "--names", "x,x"])
    assert same.exit_code == 2 and "two distinct names" in same.output
