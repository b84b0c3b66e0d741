"""LadderOutcome levels and the five-way gap taxonomy (rules in docs/ladder.md).

Inputs are counts of verified-correct rollouts; the rules are pure functions so that a
threshold sweep (tau = 1..5) re-labels a finished run without asking any model again.

LadderOutcome = the first help level with >= tau correct rollouts:
DIRECT (C1), ROADMAP-NEEDED (C2), ANSWERS-NEEDED (C3), else UNRECOVERED.

Stage 0 passes when every tested milestone has >= stage0_tau correct attempts alone.

Gap label of a family that is not DIRECT:

| Stage 0 | outcome          | gap                 |
|---------|------------------|---------------------|
| pass    | ROADMAP-NEEDED   | roadmap             |
| pass    | ANSWERS-NEEDED   | milestone-execution |
| pass    | UNRECOVERED      | composition         |
| fail    | ROADMAP-/ANSWERS-NEEDED | missing-milestone |
| fail    | UNRECOVERED      | capability          |
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum


class LadderOutcome(StrEnum):
    """The smallest help level at which the parent problem is solved."""

    DIRECT = "DIRECT"
    ROADMAP_NEEDED = "ROADMAP-NEEDED"
    ANSWERS_NEEDED = "ANSWERS-NEEDED"
    UNRECOVERED = "UNRECOVERED"


class Gap(StrEnum):
    """Where a family's reasoning breaks; NONE for families solved directly."""

    NONE = "none"
    ROADMAP = "roadmap"
    MILESTONE_EXECUTION = "milestone-execution"
    COMPOSITION = "composition"
    MISSING_MILESTONE = "missing-milestone"
    CAPABILITY = "capability"


OUTCOME_ORDER: tuple[LadderOutcome, ...] = tuple(LadderOutcome)
GAP_ORDER: tuple[Gap, ...] = tuple(Gap)


@dataclass(frozen=True)
class FamilyCounts:
    """Correct-rollout counts of one model on one family.

    ``milestones`` holds, per tested milestone, the number of correct Stage 0 attempts.
    """

    pid: str
    c1: int
    c2: int
    c3: int
    milestones: tuple[int, ...]


def outcome(counts: FamilyCounts, tau: int = 1) -> LadderOutcome:
    """The first level with at least ``tau`` correct rollouts."""
    _check_tau(tau)
    if counts.c1 >= tau:
        return LadderOutcome.DIRECT
    if counts.c2 >= tau:
        return LadderOutcome.ROADMAP_NEEDED
    if counts.c3 >= tau:
        return LadderOutcome.ANSWERS_NEEDED
    return LadderOutcome.UNRECOVERED


class MilestoneTest(StrEnum):
    """How many tested milestones Stage 0 must see solved alone."""

    STRICT = "strict"
    """Every one: the paper's milestone test, and the default everywhere."""
    HALF = "half"
    """At least half of them: the looser reading the paper uses to compare five-way labels
    across roadmaps of different length (Appendix P.2: 22/39 labels agree strictly, 29/39
    under this one), since a finer roadmap makes "every milestone" harder to pass."""


def passes_stage0(
    counts: FamilyCounts, stage0_tau: int = 1, test: MilestoneTest = MilestoneTest.STRICT
) -> bool:
    """Every tested milestone (or, with ``test`` HALF, at least half of them) solved alone at
    least ``stage0_tau`` times.

    A family with no tested milestone cannot show that its steps are solvable, so it fails.
    """
    _check_tau(stage0_tau)
    solved = sum(c >= stage0_tau for c in counts.milestones)
    if test is MilestoneTest.HALF:
        return bool(counts.milestones) and 2 * solved >= len(counts.milestones)
    return bool(counts.milestones) and solved == len(counts.milestones)


def gap(
    counts: FamilyCounts,
    tau: int = 1,
    stage0_tau: int = 1,
    test: MilestoneTest = MilestoneTest.STRICT,
) -> Gap:
    """The five-way gap label (NONE when the family is solved directly)."""
    level = outcome(counts, tau)
    if level is LadderOutcome.DIRECT:
        return Gap.NONE
    if passes_stage0(counts, stage0_tau, test):
        return {
            LadderOutcome.ROADMAP_NEEDED: Gap.ROADMAP,
            LadderOutcome.ANSWERS_NEEDED: Gap.MILESTONE_EXECUTION,
            LadderOutcome.UNRECOVERED: Gap.COMPOSITION,
        }[level]
    return Gap.CAPABILITY if level is LadderOutcome.UNRECOVERED else Gap.MISSING_MILESTONE


@dataclass(frozen=True)
class ModelProfile:
    """One model's readout over a family set."""

    n_families: int
    outcomes: dict[LadderOutcome, int]
    gaps: dict[Gap, int]
    any_probe: int
    stage0_pass: int
    milestones_passed: int
    milestones_tested: int

    @property
    def milestone_pass_fraction(self) -> float:
        return self.milestones_passed / self.milestones_tested if self.milestones_tested else 0.0


def profile(families: Sequence[FamilyCounts], tau: int = 1, stage0_tau: int = 1) -> ModelProfile:
    """Counts per outcome level and gap label, any-probe count, milestone pass fraction."""
    outcomes = dict.fromkeys(OUTCOME_ORDER, 0)
    gaps = dict.fromkeys(GAP_ORDER, 0)
    for fam in families:
        outcomes[outcome(fam, tau)] += 1
        gaps[gap(fam, tau, stage0_tau)] += 1
    return ModelProfile(
        n_families=len(families),
        outcomes=outcomes,
        gaps=gaps,
        any_probe=len(families) - outcomes[LadderOutcome.UNRECOVERED],
        stage0_pass=sum(passes_stage0(f, stage0_tau) for f in families),
        milestones_passed=sum(c >= stage0_tau for f in families for c in f.milestones),
        milestones_tested=sum(len(f.milestones) for f in families),
    )


TAUS = (1, 2, 3, 4, 5)
"""The thresholds of the paper's sensitivity analysis (seed, Appendix D)."""


def tau_sensitivity(
    families: Sequence[FamilyCounts], taus: Sequence[int] = TAUS
) -> dict[int, dict[LadderOutcome, int]]:
    """LadderOutcome counts at each threshold (seed, Appendix D: tau = 1..5)."""
    return {tau: profile(families, tau).outcomes for tau in taus}


def _check_tau(tau: int) -> None:
    if tau < 1:
        raise ValueError(f"tau must be >= 1, got {tau}")
