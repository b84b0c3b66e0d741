"""The unbiased pass@k estimator against hand values and brute-force subset enumeration."""

from __future__ import annotations

from itertools import combinations
from math import comb

import pytest

from gapscope.stats.passk import mean_pass_at_k, pass_at_k


def _enumerated(n: int, c: int, k: int) -> float:
    """Share of k-subsets of n samples (the first c correct) holding a correct one."""
    subsets = list(combinations(range(n), k))
    return sum(any(i < c for i in s) for s in subsets) / len(subsets)


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (10, 0, 1, 0.0),
        (10, 3, 1, 0.3),
        (4, 1, 2, 0.5),  # 1 - C(3,2)/C(4,2) = 1 - 3/6
        (5, 2, 2, 0.7),  # 1 - C(3,2)/C(5,2) = 1 - 3/10
        (5, 4, 2, 1.0),  # n - c < k: every pair holds a correct sample
        (32, 32, 32, 1.0),
        (32, 1, 32, 1.0),
        (32, 1, 8, 0.25),  # one correct among 32: it is in a random 8-subset w.p. 8/32
    ],
)
def test_hand_computed(n: int, c: int, k: int, expected: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(expected)


def test_matches_enumeration_of_subsets() -> None:
    for n in range(1, 8):
        for c in range(n + 1):
            for k in range(1, n + 1):
                assert pass_at_k(n, c, k) == pytest.approx(_enumerated(n, c, k)), (n, c, k)


def test_large_n_is_stable_where_binomials_overflow_floats() -> None:
    n, c, k = 2000, 3, 300
    exact = 1 - comb(n - c, k) / comb(n, k)  # exact integers, one rounding at the end
    assert pass_at_k(n, c, k) == pytest.approx(exact, rel=1e-12)


def test_k_above_n_is_rejected_with_advice() -> None:
    with pytest.raises(ValueError, match=r"pass@32 needs k in \[1, n\]; with n=8.*raise n"):
        pass_at_k(8, 2, 32)


@pytest.mark.parametrize(("n", "c", "k"), [(0, 0, 1), (4, 5, 1), (4, -1, 1), (4, 1, 0)])
def test_impossible_arguments(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)


def test_mean_over_problems() -> None:
    assert mean_pass_at_k([(4, 1), (4, 0), (2, 2)], 2) == pytest.approx((0.5 + 0 + 1) / 3)
    with pytest.raises(ValueError, match="no problems"):
        mean_pass_at_k([], 1)
    with pytest.raises(ValueError, match="k > n"):
        mean_pass_at_k([(4, 1), (1, 1)], 2)
