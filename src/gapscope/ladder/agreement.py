"""Teacher and granularity agreement: one model's readout on two family sets of the same
problems (seed Appendix P).

A second teacher, or a roadmap cut four times finer, changes the milestones but not the
problems. Per-family recovery should barely move (the paper: C2 and C3 outcomes agree for 83 %
and 87 % of families under a second teacher, 85 % and 85 % under finer roadmaps), while the
five-way labels move more, because the strict milestone test depends on how many milestones
there are (22 of 39 labels agree strictly, 29 of 39 when passing means solving at least half;
11 of the 17 strict disagreements have the same parent-probe outcome). So the paper compares
labels only at matched granularity and reads the fraction of milestones passed beside them;
this module computes all three from per-family counts of the two runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gapscope.ladder.probes import LADDER, Condition
from gapscope.ladder.taxonomy import (
    FamilyCounts,
    Gap,
    LadderOutcome,
    MilestoneTest,
    gap,
    outcome,
)


@dataclass(frozen=True)
class OutcomeAgreement:
    """Per-family "solved under ``condition``" (at least tau correct rollouts) in A vs B."""

    condition: Condition
    both: int
    only_a: int
    only_b: int
    neither: int

    @property
    def families(self) -> int:
        return self.both + self.only_a + self.only_b + self.neither

    @property
    def agree(self) -> int:
        return self.both + self.neither


@dataclass(frozen=True)
class LabelAgreement:
    """Five-way labels under one milestone test, over the families neither run solves
    directly (a DIRECT family has no gap label).

    ``same_outcome`` counts the disagreements whose parent-probe outcome level is the same in
    both runs: the milestone test alone flipped the label.
    """

    test: MilestoneTest
    labelled: int
    agree: int
    same_outcome: int


@dataclass(frozen=True)
class FamilyReadout:
    """One family in both runs: milestones tested and passed, outcome, labels."""

    pid: str
    tested: tuple[int, int]
    passed: tuple[int, int]
    outcome: tuple[LadderOutcome, LadderOutcome]
    strict: tuple[Gap, Gap]
    half: tuple[Gap, Gap]


@dataclass(frozen=True)
class MilestoneReadout:
    """One run's milestones over the matched families (Appendix P.4's secondary readout)."""

    tested: int
    passed: int
    mean_per_family: float
    mean_fraction_passed: float

    @property
    def fraction_passed(self) -> float:
        return self.passed / self.tested if self.tested else 0.0


@dataclass(frozen=True)
class Agreement:
    """Everything ``gapscope ladder agree`` reports; ``only_a``/``only_b`` are the pids one
    run has and the other lacks (not compared)."""

    tau: int
    only_a: tuple[str, ...]
    only_b: tuple[str, ...]
    outcomes: tuple[OutcomeAgreement, ...]
    labels: tuple[LabelAgreement, ...]
    milestones: tuple[MilestoneReadout, MilestoneReadout]
    families: tuple[FamilyReadout, ...]


_SOLVES: dict[Condition, Callable[[FamilyCounts], int]] = {
    Condition.C1: lambda f: f.c1,
    Condition.C2: lambda f: f.c2,
    Condition.C3: lambda f: f.c3,
}
"""Each help level's correct-rollout count in a family's counts."""


def _passed(f: FamilyCounts, stage0_tau: int) -> int:
    return sum(c >= stage0_tau for c in f.milestones)


def _milestones(fams: Sequence[FamilyCounts], stage0_tau: int) -> MilestoneReadout:
    tested = [len(f.milestones) for f in fams]
    fractions = [_passed(f, stage0_tau) / len(f.milestones) for f in fams if f.milestones]
    return MilestoneReadout(
        tested=sum(tested),
        passed=sum(_passed(f, stage0_tau) for f in fams),
        mean_per_family=sum(tested) / len(tested) if tested else 0.0,
        mean_fraction_passed=sum(fractions) / len(fractions) if fractions else 0.0,
    )


def run_agreement(
    a: Sequence[FamilyCounts], b: Sequence[FamilyCounts], tau: int = 1, stage0_tau: int = 1
) -> Agreement:
    """Agreement of run ``a`` and run ``b`` on the families (pids) both have."""
    by_b = {f.pid: f for f in b}
    pids_a = {f.pid for f in a}
    pairs = [(f, by_b[f.pid]) for f in sorted(a, key=lambda f: f.pid) if f.pid in by_b]
    outcomes = []
    for condition in LADDER:
        count = _SOLVES[condition]
        solved = [(count(x) >= tau, count(y) >= tau) for x, y in pairs]
        outcomes.append(
            OutcomeAgreement(
                condition,
                both=sum(x and y for x, y in solved),
                only_a=sum(x and not y for x, y in solved),
                only_b=sum(y and not x for x, y in solved),
                neither=sum(not x and not y for x, y in solved),
            )
        )
    readouts = tuple(
        FamilyReadout(
            pid=x.pid,
            tested=(len(x.milestones), len(y.milestones)),
            passed=(_passed(x, stage0_tau), _passed(y, stage0_tau)),
            outcome=(outcome(x, tau), outcome(y, tau)),
            strict=(gap(x, tau, stage0_tau), gap(y, tau, stage0_tau)),
            half=(
                gap(x, tau, stage0_tau, MilestoneTest.HALF),
                gap(y, tau, stage0_tau, MilestoneTest.HALF),
            ),
        )
        for x, y in pairs
    )
    labelled = [r for r in readouts if LadderOutcome.DIRECT not in r.outcome]
    labels = []
    for test in MilestoneTest:
        label = [r.strict if test is MilestoneTest.STRICT else r.half for r in labelled]
        differ = [r for r, (x, y) in zip(labelled, label, strict=True) if x != y]
        labels.append(
            LabelAgreement(
                test,
                labelled=len(labelled),
                agree=len(labelled) - len(differ),
                same_outcome=sum(r.outcome[0] == r.outcome[1] for r in differ),
            )
        )
    return Agreement(
        tau=tau,
        only_a=tuple(sorted(pids_a - set(by_b))),
        only_b=tuple(sorted(set(by_b) - pids_a)),
        outcomes=tuple(outcomes),
        labels=tuple(labels),
        milestones=(
            _milestones([x for x, _ in pairs], stage0_tau),
            _milestones([y for _, y in pairs], stage0_tau),
        ),
        families=readouts,
    )
