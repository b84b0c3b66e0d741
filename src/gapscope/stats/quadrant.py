"""Median-split quadrant test: is a capability *necessary* for a performance level?

The question behind the test is a necessary-condition claim such as "no model reaches a high
miniF2F pass@32 (Y) without a high adj-ZSCT score (X)".  A correlation coefficient does not
answer it: a necessary condition predicts an *empty corner* of the scatter plot, not a line.
So both axes are dichotomised at their empirical medians and we look at the 2x2 table::

                    low X               high X
    high Y   low_x_high_y (FORBIDDEN)  high_x_high_y
    low Y    low_x_low_y               high_x_low_y

The claim forbids the "high Y, low X" cell.  The null hypothesis is that the pairing between
X and Y is arbitrary: holding both margins fixed (how many models are high on X, how many are
high on Y), every placement of the ``k`` high-Y labels among the ``n`` models is equally
likely.  The one-sided p-value is the probability, under that null, of a forbidden count at
most as small as the one observed -- depletion of the forbidden cell is the evidence.

Exact computation
-----------------
For ``n <= ENUMERATION_LIMIT`` (20) the p-value is computed by literally enumerating all
``C(n, k)`` placements of the high-Y labels with :func:`itertools.combinations` (``C(10, 5) =
252`` for the ten-model study, ``C(20, 10) = 184756`` at the limit -- well under a second).
Enumeration is kept, rather than only a formula, because it is the procedure the analysis
describes and it is self-evidently correct.  Above the limit the number of placements grows
too fast, so the *same exact count* is obtained combinatorially: the number of placements that
put ``f`` high-Y labels on low-X models is ``C(n_low_x, f) * C(n_high_x, k - f)``.  This is an
exact integer count (no floating-point approximation), so both paths give identical
p-values; ``QuadrantResult.p_method`` records which one was used.

Independently, :func:`hypergeom_p_value` evaluates the same tail with
:data:`scipy.stats.hypergeom` (the forbidden count is hypergeometric: ``k`` draws from ``n``
models of which ``n_low_x`` are "successes").  It is reported alongside as a cross-check; the
test-suite asserts that the two agree.  The test is the one-sided Fisher exact test.

Tie rule
--------
"High" means *strictly above* the median; a value *equal* to the median counts as **low**.
With an even ``n`` and distinct values this splits the models exactly in half (5/5 for ten
models); with an odd ``n`` the median model itself is low, so low gets ``(n + 1) / 2``.
Ties at the median push all tied models into the low group -- a deterministic, documented
choice rather than a random tie-break, so the result is reproducible.  Counting ties as low
is also the conservative direction for a claim about *high* Y: a model needs to be strictly
better than the median to count as a high performer.  If no value lies strictly above the
median (e.g. all values equal) the split is degenerate and a :class:`ValueError` is raised.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Literal

__all__ = [
    "ENUMERATION_LIMIT",
    "QuadrantResult",
    "exact_p_value",
    "hypergeom_p_value",
    "median_split",
    "quadrant_test",
]

#: Largest ``n`` for which placements are enumerated one by one (``C(20, 10) = 184756``).
ENUMERATION_LIMIT = 20

PMethod = Literal["enumeration", "combinatorial"]


@dataclass(frozen=True)
class QuadrantResult:
    """Outcome of :func:`quadrant_test`.

    The four ``*_x_*_y`` fields are the 2x2 table; ``low_x_high_y`` is the forbidden cell and
    is repeated as ``forbidden`` so that consumers need not remember which cell is which.
    """

    n: int
    x_median: float
    y_median: float
    high_x_high_y: int
    high_x_low_y: int
    low_x_high_y: int
    low_x_low_y: int
    forbidden: int
    p_exact: float
    p_hypergeom: float
    n_placements: int
    p_method: PMethod
    forbidden_labels: tuple[str, ...] | None = None

    @property
    def n_high_x(self) -> int:
        """Number of models strictly above the X median."""
        return self.high_x_high_y + self.high_x_low_y

    @property
    def n_high_y(self) -> int:
        """Number of models strictly above the Y median (the placed labels)."""
        return self.high_x_high_y + self.low_x_high_y

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-serialisable dict (tuples become lists, ``None`` stays ``None``)."""
        return {
            "n": self.n,
            "x_median": self.x_median,
            "y_median": self.y_median,
            "high_x_high_y": self.high_x_high_y,
            "high_x_low_y": self.high_x_low_y,
            "low_x_high_y": self.low_x_high_y,
            "low_x_low_y": self.low_x_low_y,
            "forbidden": self.forbidden,
            "p_exact": self.p_exact,
            "p_hypergeom": self.p_hypergeom,
            "n_placements": self.n_placements,
            "p_method": self.p_method,
            "forbidden_labels": (
                None if self.forbidden_labels is None else list(self.forbidden_labels)
            ),
        }


def _as_finite_floats(values: Sequence[float], name: str) -> list[float]:
    """Coerce to floats, rejecting NaN/inf: a median over them is meaningless or undefined."""
    out: list[float] = []
    for i, v in enumerate(values):
        try:
            f = float(v)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name}[{i}] is not a number: {v!r}") from exc
        if math.isnan(f):
            raise ValueError(f"{name}[{i}] is NaN; remove or impute missing values first")
        if math.isinf(f):
            raise ValueError(f"{name}[{i}] is infinite ({f}); values must be finite")
        out.append(f)
    return out


def median_split(values: Sequence[float], name: str = "values") -> tuple[float, tuple[bool, ...]]:
    """Return ``(median, is_high)`` where ``is_high[i]`` means strictly above the median.

    Values equal to the median are low (see the module docstring for why).  Raises
    :class:`ValueError` for fewer than two values, NaN/inf, or a degenerate split in which
    no value lies strictly above the median.  ``name`` only labels error messages.
    """
    xs = _as_finite_floats(values, name)
    if len(xs) < 2:
        raise ValueError(f"{name}: need at least 2 models, got {len(xs)}")
    med = float(statistics.median(xs))
    is_high = tuple(v > med for v in xs)
    if not any(is_high):
        raise ValueError(
            f"{name}: degenerate median split -- no value lies strictly above the median "
            f"{med:g} (all {len(xs)} values are on the low side, e.g. all equal or ties at the "
            "top)"
        )
    return med, is_high


def _check_margins(n: int, n_low_x: int, n_high_y: int, observed: int) -> None:
    if n < 1:
        raise ValueError(f"n must be positive, got {n}")
    if not 0 <= n_low_x <= n:
        raise ValueError(f"n_low_x must be in [0, {n}], got {n_low_x}")
    if not 0 <= n_high_y <= n:
        raise ValueError(f"n_high_y must be in [0, {n}], got {n_high_y}")
    if observed < 0:
        raise ValueError(f"observed forbidden count must be >= 0, got {observed}")


def exact_p_value(
    n: int,
    n_low_x: int,
    n_high_y: int,
    observed: int,
    *,
    enumeration_limit: int = ENUMERATION_LIMIT,
) -> tuple[float, int, PMethod]:
    """Exact ``P(forbidden <= observed)`` over all placements of the high-Y labels.

    The low-X models are taken to be the first ``n_low_x`` positions (only the margins
    matter under the null, so which positions they occupy is irrelevant).  Returns
    ``(p, n_placements, method)``; ``n_placements`` is ``C(n, n_high_y)`` either way.

    For ``n <= enumeration_limit`` every placement is generated with
    :func:`itertools.combinations` and counted; above it the identical integer count is
    obtained as ``sum_f C(n_low_x, f) * C(n - n_low_x, n_high_y - f)`` so large ``n`` does
    not blow up.  The final division is the only floating-point step.
    """
    _check_margins(n, n_low_x, n_high_y, observed)
    total = math.comb(n, n_high_y)
    if n <= enumeration_limit:
        hits = 0
        # Position i is low-X iff i < n_low_x, so the forbidden count of a placement is the
        # number of chosen positions below n_low_x.
        for placement in combinations(range(n), n_high_y):
            forbidden = sum(1 for i in placement if i < n_low_x)
            if forbidden <= observed:
                hits += 1
        return hits / total, total, "enumeration"
    n_high_x = n - n_low_x
    hits = sum(
        math.comb(n_low_x, f) * math.comb(n_high_x, n_high_y - f)
        for f in range(min(observed, n_low_x, n_high_y) + 1)
    )  # math.comb(a, b) is 0 for b > a, so impossible splits contribute nothing.
    return hits / total, total, "combinatorial"


def hypergeom_p_value(n: int, n_low_x: int, n_high_y: int, observed: int) -> float:
    """``P(forbidden <= observed)`` from :data:`scipy.stats.hypergeom`, as a cross-check.

    The forbidden count is the number of low-X models among ``n_high_y`` drawn without
    replacement from ``n`` models, i.e. ``Hypergeom(M=n, n=n_low_x, N=n_high_y)``.
    """
    _check_margins(n, n_low_x, n_high_y, observed)
    from scipy.stats import hypergeom  # here, not at import: scipy.stats slows start-up

    p = float(hypergeom.cdf(observed, n, n_low_x, n_high_y))
    # The CDF can overshoot 1 by an ulp; a probability must stay in [0, 1].
    return min(1.0, max(0.0, p))


def quadrant_test(
    x: Sequence[float],
    y: Sequence[float],
    labels: Sequence[str] | None = None,
    *,
    enumeration_limit: int = ENUMERATION_LIMIT,
) -> QuadrantResult:
    """Median-split quadrant test of "high ``y`` requires high ``x``".

    ``x`` is the putative necessary capability (e.g. adj-ZSCT), ``y`` the outcome (e.g.
    miniF2F pass@32), one entry per model; ``labels`` optionally names the models so the
    result can list who sits in the forbidden cell (high Y, low X).  Raises
    :class:`ValueError` on fewer than 2 models, mismatched lengths, NaN/inf values or a
    degenerate median split on either axis.
    """
    if len(x) != len(y):
        raise ValueError(f"x and y must have the same length, got {len(x)} and {len(y)}")
    if labels is not None and len(labels) != len(x):
        raise ValueError(f"labels must have one entry per model: got {len(labels)} for {len(x)}")
    if len(x) < 2:
        raise ValueError(f"need at least 2 models, got {len(x)}")
    x_median, x_high = median_split(x, "x")
    y_median, y_high = median_split(y, "y")
    n = len(x_high)

    hh = sum(1 for a, b in zip(x_high, y_high, strict=True) if a and b)
    hl = sum(1 for a, b in zip(x_high, y_high, strict=True) if a and not b)
    lh = sum(1 for a, b in zip(x_high, y_high, strict=True) if not a and b)
    ll = n - hh - hl - lh
    n_low_x = lh + ll
    n_high_y = hh + lh

    p_exact, n_placements, method = exact_p_value(
        n, n_low_x, n_high_y, lh, enumeration_limit=enumeration_limit
    )
    p_hyper = hypergeom_p_value(n, n_low_x, n_high_y, lh)

    forbidden_labels: tuple[str, ...] | None = None
    if labels is not None:
        forbidden_labels = tuple(
            str(lab) for lab, a, b in zip(labels, x_high, y_high, strict=True) if not a and b
        )

    return QuadrantResult(
        n=n,
        x_median=x_median,
        y_median=y_median,
        high_x_high_y=hh,
        high_x_low_y=hl,
        low_x_high_y=lh,
        low_x_low_y=ll,
        forbidden=lh,
        p_exact=p_exact,
        p_hypergeom=p_hyper,
        n_placements=n_placements,
        p_method=method,
        forbidden_labels=forbidden_labels,
    )
