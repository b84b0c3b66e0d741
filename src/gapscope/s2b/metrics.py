"""ZSCT and adj-ZSCT on a 0-100 scale, per episode and over seeds.

ZSCT is the listener's accuracy on the held-out query games. Because a same/different decision
has a 50% guessing floor, adj-ZSCT = max(0, 2 * ZSCT - 100) maps it onto ability above chance.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

SCORE_KEYS = ("zsct", "adj_zsct", "zsct_strict", "adj_zsct_strict", "unparsed", "support_acc")
"""What the ZSCT scorer records per episode (and the analysis reads back)."""


def adj_zsct(zsct: float) -> float:
    """Ability above the 50% guessing floor, in [0, 100]."""
    if not 0.0 <= zsct <= 100.0:
        raise ValueError(f"zsct must be a percentage in [0, 100], got {zsct}")
    return max(0.0, 2.0 * zsct - 100.0)


def accuracy_percent(correct: Sequence[bool]) -> float:
    """Share of True in ``correct`` on a 0-100 scale (0 for an empty sequence)."""
    return 100.0 * sum(correct) / len(correct) if correct else 0.0


@dataclass(frozen=True)
class SeedSummary:
    """Mean and sample standard deviation of a metric over seeds (sd = 0 for one seed)."""

    mean: float
    sd: float
    n: int

    @classmethod
    def of(cls, values: Sequence[float]) -> SeedSummary:
        if not values:
            raise ValueError("no seeds to summarise")
        sd = statistics.stdev(values) if len(values) > 1 else 0.0
        return cls(mean=statistics.fmean(values), sd=sd, n=len(values))

    def __str__(self) -> str:
        return f"{self.mean:.1f} ± {self.sd:.1f}"
