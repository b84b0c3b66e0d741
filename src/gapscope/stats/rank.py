"""Rank agreement: Kendall's tau-b between two scorings of the same models.

Written out from pair counts (concordant, discordant, ties on each side) so the statistic is
exact for the small panels these diagnostics have; tests cross-check it against scipy.
``stable_ranks`` is the OracleLadder authors' way with ties: rank by a stable descending sort,
so tied models keep the order they were listed in and no tie is left.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping


def kendall_tau(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    """Kendall's tau-b between the rankings ``a`` and ``b`` induce on their common models.

    Tau-b corrects for ties: tau_b = (C - D) / sqrt((n0 - t_a) (n0 - t_b)), with n0 the number
    of pairs and t_a, t_b the pairs tied in a and in b.
    """
    common = sorted(set(a) & set(b))
    missing = [
        f"{side}[{name!r}]"
        for name in common
        for side, m in (("a", a), ("b", b))
        if math.isnan(m[name])
    ]
    if missing:
        # NaN compares unequal to everything: it would count as neither tied nor ordered and
        # pull tau towards 0 without saying so
        raise ValueError(
            f"{', '.join(missing)} is NaN: tau needs a score for every common model; drop the "
            "model or score it first"
        )
    if len(common) < 2:
        raise ValueError(f"need at least two common models, got {len(common)}")
    concordant = discordant = tied_a = tied_b = 0
    for x, y in itertools.combinations(common, 2):
        da = a[x] - a[y]
        db = b[x] - b[y]
        if da == 0:
            tied_a += 1
        if db == 0:
            tied_b += 1
        if da * db > 0:
            concordant += 1
        elif da * db < 0:
            discordant += 1
    pairs = len(common) * (len(common) - 1) // 2
    denominator = math.sqrt((pairs - tied_a) * (pairs - tied_b))
    if denominator == 0:
        raise ValueError("one of the rankings is constant: tau is undefined")
    return (concordant - discordant) / denominator


def stable_ranks(scores: Mapping[str, float]) -> dict[str, float]:
    """Rank 1, 2, ... by descending score, ties in the mapping's order (a stable sort).

    This is how the OracleLadder authors rank models before taking Kendall's tau
    (``multi_anchor_sensitivity.py``): tau on these ranks equals tau-b on the scores when no
    two scores tie, and otherwise depends on the order the models were listed in.
    """
    ordered = sorted(scores, key=lambda name: -scores[name])
    return {name: float(rank) for rank, name in enumerate(ordered, start=1)}
