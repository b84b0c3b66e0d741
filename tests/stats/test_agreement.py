"""Cohen's kappa against values worked out by hand."""

from __future__ import annotations

import pytest

from gapscope.stats.agreement import cohen_kappa


def test_three_labels_by_hand() -> None:
    # agree on items 0-2 (x), 5-6 (y), 8 (z): p_o = 6/10; marginals a = x5 y3 z2,
    # b = x4 y4 z2: p_e = (20 + 12 + 4) / 100 = 0.36; kappa = 0.24 / 0.64 = 0.375
    a = ["x", "x", "x", "x", "x", "y", "y", "y", "z", "z"]
    b = ["x", "x", "x", "y", "y", "y", "y", "z", "z", "x"]
    result = cohen_kappa(a, b)
    assert result.n == 10
    assert result.observed == pytest.approx(0.6)
    assert result.expected == pytest.approx(0.36)
    assert result.kappa == pytest.approx(0.375)


def test_two_labels_by_hand() -> None:
    # 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no: p_o = 0.7, p_e = (25*30 + 25*20)/2500 = 0.5
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    result = cohen_kappa(a, b)
    assert result.observed == pytest.approx(0.7)
    assert result.kappa == pytest.approx(0.4)


def test_perfect_and_worse_than_chance() -> None:
    assert cohen_kappa(["a", "b", "a"], ["a", "b", "a"]).kappa == pytest.approx(1.0)
    # always disagreeing on two balanced labels: p_o = 0, p_e = 0.5, kappa = -1
    assert cohen_kappa(["a", "b"], ["b", "a"]).kappa == pytest.approx(-1.0)


def test_constant_raters_have_no_kappa_and_bad_input_is_refused() -> None:
    same = cohen_kappa(["a", "a"], ["a", "a"])
    assert same.observed == 1.0 and same.kappa is None
    with pytest.raises(ValueError, match="different numbers"):
        cohen_kappa(["a"], ["a", "b"])
    with pytest.raises(ValueError, match="at least one item"):
        cohen_kappa([], [])
