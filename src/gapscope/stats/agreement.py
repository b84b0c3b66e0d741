"""Agreement between two raters who label the same items: raw agreement and Cohen's kappa.

The OracleLadder audit reports both (seed Appendix S: kappa 0.64, 76 % raw): raw agreement
alone rewards two raters who put nearly everything in the most common category, kappa
discounts the agreement their label frequencies would produce by chance.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Agreement:
    """Two raters over ``n`` items: observed agreement, chance agreement and kappa.

    ``kappa`` is None when chance agreement is 1 (both raters gave every item the same one
    label): the statistic is 0/0 there, and reporting 0 or 1 would be a number nobody measured.
    """

    n: int
    observed: float
    expected: float
    kappa: float | None


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> Agreement:
    """Cohen's kappa of the paired labels ``a[i]``, ``b[i]``.

    kappa = (p_o - p_e) / (1 - p_e), with p_o the share of items both label alike and p_e the
    sum over labels of the product of the two raters' marginal shares.
    """
    if len(a) != len(b):
        raise ValueError(f"the raters labelled different numbers of items: {len(a)} vs {len(b)}")
    n = len(a)
    if n == 0:
        raise ValueError("agreement needs at least one item labelled by both raters")
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    count_a, count_b = Counter(a), Counter(b)
    expected = sum(count_a[label] * count_b[label] for label in count_a) / (n * n)
    kappa = None if expected == 1 else (observed - expected) / (1 - expected)
    return Agreement(n=n, observed=observed, expected=expected, kappa=kappa)
