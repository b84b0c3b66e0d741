"""Tests of a group effect: one-way ANOVA and Kruskal-Wallis over k independent groups.

ANOVA is what the O-NNG paper reports for the effect of the noise level; Kruskal-Wallis is the
rank-based check that does not assume normal residuals, which 0/1 outcomes and skewed
latencies violate. Both return None when the test is undefined (fewer than two non-empty
groups, no variation at all, or no within-group degrees of freedom) instead of a NaN that a
table would print as a number.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class GroupTest:
    """A test statistic and its p-value."""

    statistic: float
    p_value: float


def _usable(groups: Sequence[Sequence[float]]) -> list[Sequence[float]] | None:
    kept = [g for g in groups if g]
    if len(kept) < 2 or len({v for g in kept for v in g}) < 2:
        return None
    return kept


def _result(stat: object, p: object) -> GroupTest | None:
    statistic, p_value = float(stat), float(p)  # type: ignore[arg-type]
    if math.isnan(statistic) or math.isnan(p_value):
        return None
    return GroupTest(statistic, p_value)


def one_way_anova(groups: Sequence[Sequence[float]]) -> GroupTest | None:
    """F test of equal group means; None without within-group variation or degrees of freedom."""
    from scipy import stats  # imported here: scipy.stats costs ~0.5 s at start-up

    kept = _usable(groups)
    if kept is None:
        return None
    if all(len(set(g)) == 1 for g in kept) or sum(len(g) for g in kept) <= len(kept):
        return None
    stat, p = stats.f_oneway(*kept)
    return _result(stat, p)


def kruskal_wallis(groups: Sequence[Sequence[float]]) -> GroupTest | None:
    """Rank test of equal group distributions (H statistic, chi-square p)."""
    from scipy import stats

    kept = _usable(groups)
    if kept is None:
        return None
    stat, p = stats.kruskal(*kept)
    return _result(stat, p)
