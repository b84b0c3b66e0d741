"""Paired comparisons of two models on the same items: exact McNemar, a paired bootstrap of the
difference in rates, and Holm's step-down correction across several such comparisons.

Paired because both models answered the *same* items: the information about which model is
better lies only in the discordant items (A right and B wrong, or the reverse). McNemar's exact
test conditions on the number of discordant items d = b + c and asks how unlikely a split at
least as lopsided as (b, c) is under Binomial(d, 1/2); it is exact for any d, where the
chi-square form needs large counts. The bootstrap resamples *items* (both models' outcomes on
an item move together) so the interval of the difference keeps the pairing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class McNemarResult:
    """Discordant counts and the two-sided exact p-value.

    ``b``: items A got right and B wrong; ``c``: the reverse; ``n``: all paired items.
    """

    n: int
    b: int
    c: int
    p_value: float


def mcnemar_exact(a: Sequence[bool], b: Sequence[bool]) -> McNemarResult:
    """Exact two-sided McNemar test on paired binary outcomes (1.0 when nothing is discordant).

    The p-value is 2 * P(X <= min(b, c)) for X ~ Binomial(b + c, 1/2), capped at 1: the
    doubled one-sided tail, the usual exact form.
    """
    if len(a) != len(b):
        raise ValueError(f"paired outcomes must have equal length, got {len(a)} and {len(b)}")
    only_a = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
    only_b = sum(1 for x, y in zip(a, b, strict=True) if y and not x)
    d = only_a + only_b
    if d == 0:
        return McNemarResult(len(a), 0, 0, 1.0)
    k = min(only_a, only_b)
    tail = sum(math.comb(d, i) for i in range(k + 1)) / 2**d
    return McNemarResult(len(a), only_a, only_b, min(1.0, 2.0 * tail))


@dataclass(frozen=True)
class DifferenceCI:
    """rate(A) - rate(B) and its paired percentile bootstrap interval (``low``/``high`` None
    over a single item: resampling one item only ever returns it, which is no interval)."""

    estimate: float
    low: float | None
    high: float | None
    confidence: float
    n_resamples: int

    def text(self, scale: float = 100.0) -> str:
        """``+d [+lo, +hi]`` on ``scale`` (percent points), or ``+d (n = 1, no CI)``."""
        if self.low is None or self.high is None:
            return f"{scale * self.estimate:+.1f} (n = 1, no CI)"
        return f"{scale * self.estimate:+.1f} [{scale * self.low:+.1f}, {scale * self.high:+.1f}]"


def paired_bootstrap_difference(
    a: Sequence[bool],
    b: Sequence[bool],
    *,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    rng: np.random.Generator,
) -> DifferenceCI:
    """Percentile interval of mean(A) - mean(B), resampling items with their pair intact."""
    if len(a) != len(b):
        raise ValueError(f"paired outcomes must have equal length, got {len(a)} and {len(b)}")
    if not a:
        raise ValueError("no paired items to compare")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    diff = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    if len(diff) < 2:
        return DifferenceCI(float(diff.mean()), None, None, confidence, n_resamples)
    draws = rng.integers(0, len(diff), size=(n_resamples, len(diff)))
    means = diff[draws].mean(axis=1)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return DifferenceCI(float(diff.mean()), float(low), float(high), confidence, n_resamples)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values, in the input order (controls the family-wise error).

    The i-th smallest p is multiplied by (m - i), then made monotone and capped at 1. A NaN
    (a test that could not be computed) has no place in the order of the p-values, and
    sorting around it silently shuffles the step-down, so it is refused: leave that test out
    of the family instead. So is a value outside [0, 1].
    """
    for index, p in enumerate(p_values):
        if math.isnan(p):
            raise ValueError(
                f"p_values[{index}] is NaN: Holm's step-down needs every p-value ordered; "
                "leave the test that produced it out of the family"
            )
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p_values[{index}] = {p} is not a probability in [0, 1]")
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted
