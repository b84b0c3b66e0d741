"""LadderOutcome levels, gap labels and the tau sweep on a hand-built panel."""

from __future__ import annotations

import pytest

from gapscope.ladder.taxonomy import (
    FamilyCounts,
    Gap,
    LadderOutcome,
    MilestoneTest,
    gap,
    outcome,
    passes_stage0,
    profile,
    tau_sensitivity,
)

# pid: (c1, c2, c3, milestones) -> expected outcome and gap at tau = 1
PANEL = {
    "direct": ((3, 0, 0, (8, 8)), LadderOutcome.DIRECT, Gap.NONE),
    "direct-fails-s0": ((1, 8, 8, (0, 8)), LadderOutcome.DIRECT, Gap.NONE),
    "roadmap": ((0, 2, 5, (1, 4)), LadderOutcome.ROADMAP_NEEDED, Gap.ROADMAP),
    "execution": ((0, 0, 4, (2, 2, 2)), LadderOutcome.ANSWERS_NEEDED, Gap.MILESTONE_EXECUTION),
    "composition": ((0, 0, 0, (8, 8)), LadderOutcome.UNRECOVERED, Gap.COMPOSITION),
    "missing-r": ((0, 1, 0, (0, 8)), LadderOutcome.ROADMAP_NEEDED, Gap.MISSING_MILESTONE),
    "missing-a": ((0, 0, 1, (3, 0)), LadderOutcome.ANSWERS_NEEDED, Gap.MISSING_MILESTONE),
    "capability": ((0, 0, 0, (0, 0)), LadderOutcome.UNRECOVERED, Gap.CAPABILITY),
    "no-milestones": ((0, 0, 0, ()), LadderOutcome.UNRECOVERED, Gap.CAPABILITY),
}


def _fam(pid: str) -> FamilyCounts:
    c1, c2, c3, ms = PANEL[pid][0]
    return FamilyCounts(pid, c1, c2, c3, ms)


@pytest.mark.parametrize("pid", sorted(PANEL))
def test_hand_built_panel(pid: str) -> None:
    _, expected_outcome, expected_gap = PANEL[pid]
    assert outcome(_fam(pid)) is expected_outcome
    assert gap(_fam(pid)) is expected_gap


def test_composition_gap_means_stage0_pass_and_unrecovered() -> None:
    fam = _fam("composition")
    assert passes_stage0(fam) and outcome(fam) is LadderOutcome.UNRECOVERED
    assert gap(fam) is Gap.COMPOSITION


def test_thresholds_move_families_down_the_ladder() -> None:
    fam = FamilyCounts("x", c1=2, c2=3, c3=5, milestones=(4, 2))
    assert [outcome(fam, tau) for tau in (1, 2, 3, 4, 5, 6)] == [
        LadderOutcome.DIRECT,
        LadderOutcome.DIRECT,
        LadderOutcome.ROADMAP_NEEDED,
        LadderOutcome.ANSWERS_NEEDED,
        LadderOutcome.ANSWERS_NEEDED,
        LadderOutcome.UNRECOVERED,
    ]
    assert passes_stage0(fam, 2) and not passes_stage0(fam, 3)
    assert gap(fam, tau=3, stage0_tau=3) is Gap.MISSING_MILESTONE
    with pytest.raises(ValueError, match="tau must be >= 1"):
        outcome(fam, 0)


def test_profile_counts_and_tau_table() -> None:
    fams = [_fam(pid) for pid in sorted(PANEL)]
    p = profile(fams)
    assert p.n_families == 9
    assert p.outcomes == {
        LadderOutcome.DIRECT: 2,
        LadderOutcome.ROADMAP_NEEDED: 2,
        LadderOutcome.ANSWERS_NEEDED: 2,
        LadderOutcome.UNRECOVERED: 3,
    }
    assert p.gaps[Gap.MISSING_MILESTONE] == 2
    assert p.gaps[Gap.CAPABILITY] == 2
    assert sum(p.gaps.values()) == 9
    assert p.any_probe == 6
    # milestones solved alone at least once / tested
    assert (p.milestones_passed, p.milestones_tested) == (12, 17)
    assert p.stage0_pass == 4
    table = tau_sensitivity(fams)
    assert table[1] == p.outcomes
    # at tau = 5 only the families with >= 5 correct anywhere survive
    assert table[5] == {
        LadderOutcome.DIRECT: 0,
        LadderOutcome.ROADMAP_NEEDED: 1,
        LadderOutcome.ANSWERS_NEEDED: 1,
        LadderOutcome.UNRECOVERED: 7,
    }


def test_the_half_milestone_test_counts_exactly_half_as_passing() -> None:
    half = FamilyCounts("h", 0, 0, 0, (1, 0))  # 1 of 2 solved alone
    third = FamilyCounts("t", 0, 0, 0, (1, 0, 0))  # 1 of 3: less than half
    assert passes_stage0(half, test=MilestoneTest.HALF)
    assert not passes_stage0(third, test=MilestoneTest.HALF)
    assert not passes_stage0(half)  # the strict test wants every one


@pytest.mark.parametrize(
    ("milestones", "passes"),
    [((2, 2, 0, 0), True), ((3, 0, 0, 0), False), ((0, 0), False), ((4, 1, 1, 0, 0), True)],
)
def test_the_half_milestone_test_compares_the_share_solved_alone(
    milestones: tuple[int, ...], passes: bool
) -> None:
    """2 of 4 is half (passes), 1 of 4 and none of 2 are not; 3 of 5 is more than half."""
    family = FamilyCounts("h", 0, 0, 0, milestones)
    assert passes_stage0(family, test=MilestoneTest.HALF) is passes


def test_profile_labels_gaps_at_the_tau_it_is_given() -> None:
    """Outcome and gap both move with tau; Stage 0 keeps its own threshold (1)."""
    fams = [
        FamilyCounts("a", 1, 0, 0, (1, 1)),  # tau 1: direct; tau 2: unrecovered, composition
        FamilyCounts("b", 0, 1, 1, (0, 1)),  # roadmap-needed, missing -> unrecovered, capability
        FamilyCounts("c", 2, 0, 0, (0,)),  # direct at both
        FamilyCounts("d", 0, 1, 3, (2, 2)),  # roadmap -> answers-needed, milestone-execution
    ]
    at_1, at_2 = profile(fams, 1), profile(fams, 2)
    assert at_1.gaps == {
        Gap.NONE: 2,
        Gap.ROADMAP: 1,
        Gap.MILESTONE_EXECUTION: 0,
        Gap.COMPOSITION: 0,
        Gap.MISSING_MILESTONE: 1,
        Gap.CAPABILITY: 0,
    }
    assert at_2.gaps == {
        Gap.NONE: 1,
        Gap.ROADMAP: 0,
        Gap.MILESTONE_EXECUTION: 1,
        Gap.COMPOSITION: 1,
        Gap.MISSING_MILESTONE: 0,
        Gap.CAPABILITY: 1,
    }
    assert (at_1.any_probe, at_2.any_probe) == (4, 2)
    assert at_1.stage0_pass == at_2.stage0_pass == 2
