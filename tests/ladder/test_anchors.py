"""The anchor screen's funnel and the composition-gap ranking agreement between anchors."""

from __future__ import annotations

import math

import pytest

from gapscope.ladder.anchors import anchor_agreement, screen
from gapscope.ladder.taxonomy import FamilyCounts


def _fc(pid: str, c1: int, c2: int = 0, c3: int = 0, ms: tuple[int, ...] = (3, 3)) -> FamilyCounts:
    return FamilyCounts(pid, c1, c2, c3, ms)


def test_screen_counts_each_filter_of_the_funnel() -> None:
    anchor = [
        _fc("solved-directly", 1),
        _fc("milestone-failed", 0, ms=(3, 0)),
        _fc("one-milestone", 0, ms=(4,)),
        _fc("kept-a", 0, c3=2),
        _fc("kept-b", 0, ms=(1, 1, 1)),
    ]
    funnel = screen(anchor)
    assert funnel.counts() == {
        "compiled": 5,
        "anchor_fails_parent": 4,
        "anchor_passes_milestone_test": 3,
        "at_least_2_tested_milestones": 2,
        "kept": 2,
    }
    assert funnel.kept == ("kept-a", "kept-b")


def test_same_screen_gives_perfect_agreement() -> None:
    runs = {
        "a": [_fc("f1", 0), _fc("f2", 0), _fc("f3", 0)],
        "b": [_fc("f1", 0), _fc("f2", 0), _fc("f3", 0, c2=1)],
        "c": [_fc("f1", 0), _fc("f2", 0, c2=1), _fc("f3", 0, c2=1)],
    }
    agreement = anchor_agreement(runs)
    assert agreement is not None
    assert agreement.pairs == {("a", "b"): 1.0, ("a", "c"): 1.0, ("b", "c"): 1.0}
    assert agreement.mean == 1.0
    assert agreement.screened == {"a": 3, "b": 3, "c": 3}


def test_disjoint_screens_can_reverse_the_ranking() -> None:
    runs = {
        # a screens f1, f2 (fails them directly); b and c solve those directly
        "a": [_fc("f1", 0), _fc("f2", 0), _fc("f3", 5), _fc("f4", 5)],
        "b": [_fc("f1", 5), _fc("f2", 5), _fc("f3", 0), _fc("f4", 0)],
        "c": [_fc("f1", 5), _fc("f2", 5), _fc("f3", 0), _fc("f4", 0, c2=1)],
    }
    agreement = anchor_agreement(runs)
    assert agreement is not None
    # under a: a 2, b 0, c 0; under b and c: a 0, b 2, c 1 -> tau-b = -2 / sqrt(2 * 3)
    assert agreement.pairs[("a", "b")] == pytest.approx(-2 / math.sqrt(6))
    assert agreement.pairs[("a", "c")] == pytest.approx(-2 / math.sqrt(6))
    assert agreement.pairs[("b", "c")] == 1.0
    assert agreement.mean == pytest.approx((1 - 4 / math.sqrt(6)) / 3)


def test_undefined_pairs_are_reported_not_averaged() -> None:
    runs = {"a": [_fc("f1", 5)], "b": [_fc("f1", 5)]}  # nobody screens anything
    agreement = anchor_agreement(runs)
    assert agreement is not None
    assert agreement.pairs == {("a", "b"): None} and agreement.mean is None
    assert anchor_agreement({"a": runs["a"]}) is None
