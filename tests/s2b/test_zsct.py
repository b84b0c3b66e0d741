"""ZSCT's two formulas by hand: accuracy on the query games (%) and adj-ZSCT, the ability above
the 50 % guessing floor (seed: adj = max(0, 2 ZSCT - 100))."""

from __future__ import annotations

import pytest

from gapscope.s2b.metrics import accuracy_percent, adj_zsct


@pytest.mark.parametrize(
    ("zsct", "adjusted"),
    [(0.0, 0.0), (40.0, 0.0), (50.0, 0.0), (50.5, 1.0), (75.0, 50.0), (100.0, 100.0)],
)
def test_adj_zsct_is_twice_the_margin_over_chance(zsct: float, adjusted: float) -> None:
    assert adj_zsct(zsct) == pytest.approx(adjusted)


@pytest.mark.parametrize("outside", [-0.5, 100.5])
def test_adj_zsct_refuses_a_value_that_is_no_percentage(outside: float) -> None:
    with pytest.raises(ValueError, match="percentage"):
        adj_zsct(outside)


def test_accuracy_is_the_share_right_in_percent() -> None:
    assert accuracy_percent([True, False, True, True]) == 75.0
    assert accuracy_percent([True]) == 100.0 and accuracy_percent([False]) == 0.0
    assert accuracy_percent([]) == 0.0
