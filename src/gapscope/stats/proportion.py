"""Confidence intervals of a single proportion."""

from __future__ import annotations

import math


def wilson_percent(successes: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson score 95% interval of a proportion, in percent.

    Chosen over the normal approximation because it stays inside [0, 100] and behaves at
    0/n and n/n, which small diagnostic runs hit often.
    """
    if n <= 0:
        raise ValueError("a proportion needs n >= 1")
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return 100 * max(0.0, centre - half), 100 * min(1.0, centre + half)
