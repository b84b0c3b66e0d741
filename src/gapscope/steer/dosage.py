"""The dosage curve: a metric per (direction, alpha), and how monotone each direction is.

Plain numbers in, plain numbers out (no model, no Inspect). A *condition* is one direction at
one alpha; it holds the metric of every unit (an S2B episode seed, or a miniF2F problem) and
the share of incoherent outputs (S2B: unparseable answers; prove: parse/elaboration errors or
empty extractions). alpha = 0 is the unsteered baseline and belongs to every direction's curve.

Per condition: the mean over units, weighted when the units carry weights (prove: a problem
weighs its checked attempts, so the mean is the per-attempt solve rate, correct attempts /
attempts, the seed's 32.3 % = 155 / 480), the sample sd over units, a percentile bootstrap CI
that resamples units (clustered: a problem's attempts stay together), and the relative drop
1 - mean / baseline mean (the seed's "91 % relative drop" = 1 - 2.9 / 32.3).

Per direction: Spearman's rho between alpha and the per-unit metric (all points, baseline
included), and the least-squares slope with a cluster-bootstrap CI that resamples units, so
the points of one unit stay together. A resample whose units all sit at a single alpha has no
slope: it is dropped and counted (``Trend.dropped``), not read as a flat curve. A CLB
direction should show a large |rho| and a slope CI away from 0; a control, rho near 0 and a
slope CI around 0. An interval over fewer than two units is absent (None, shown "n/a"):
resampling one unit only ever returns that unit.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray
from scipy import stats as scipy_stats

from gapscope.stats import bootstrap_ci

BASELINE = "baseline"
"""The direction name of the alpha = 0 condition, shared by every curve."""


@dataclass(frozen=True)
class DoseCondition:
    """One cell of the grid: ``values[unit]`` is the metric of that unit under it."""

    direction: str
    alpha: float
    values: Mapping[str, float]
    incoherent: float
    extra: Mapping[str, float] = field(default_factory=dict)
    weights: Mapping[str, float] | None = None
    """A unit's weight in the mean (prove: its checked attempts); None: equal weights."""
    per_unit: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    """More numbers per unit, shown beside the metric (prove: attempts, correct, pass@k)."""
    overlaps_extraction: bool = False
    """The run evaluated episodes the direction was extracted from (not held out)."""


@dataclass(frozen=True)
class CurvePoint:
    direction: str
    alpha: float
    n: int
    mean: float
    sd: float
    ci_low: float | None
    ci_high: float | None
    incoherent: float
    extra: Mapping[str, float]
    values: Mapping[str, float]
    """The metric of every unit (per seed, per problem: the seed's Figure 6)."""
    relative_drop: float | None = None
    """1 - mean / baseline mean; None without a baseline or when the baseline mean is 0."""
    per_unit: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    overlaps_extraction: bool = False


@dataclass(frozen=True)
class Trend:
    """Monotonicity of one direction's curve; ``rho`` is None when a side is constant, the
    slope None when every point sits at one alpha, its CI None over fewer than two units or
    when every resample was dropped."""

    direction: str
    rho: float | None
    rho_p: float | None
    slope: float | None
    slope_low: float | None
    slope_high: float | None
    points: int
    dropped: int = 0
    """Bootstrap resamples left out of the slope CI: their units all sat at one alpha."""
    resamples: int = 0


def _arrays(condition: DoseCondition) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The condition's per-unit values and weights, in unit order."""
    units = list(condition.values)
    if not units:
        raise ValueError(f"condition {condition.direction} alpha={condition.alpha} is empty")
    given = condition.weights
    values = np.array([condition.values[u] for u in units], dtype=np.float64)
    weights = np.array([given[u] if given else 1.0 for u in units], dtype=np.float64)
    if not (weights > 0).all():
        raise ValueError(
            f"condition {condition.direction} alpha={condition.alpha}: every unit needs a "
            "positive weight"
        )
    return values, weights


def _weighted_mean(values: NDArray[np.float64], weights: NDArray[np.float64]) -> float:
    return float(values @ weights / weights.sum())


def curve_points(
    conditions: Sequence[DoseCondition], *, n_resamples: int = 2000, seed: int = 0
) -> list[CurvePoint]:
    """Summaries of every condition, in the given order, each with its drop relative to the
    baseline condition (when there is one)."""
    rng = np.random.default_rng(seed)
    baseline = next(
        (_weighted_mean(*_arrays(c)) for c in conditions if c.direction == BASELINE), None
    )
    out = []
    for condition in conditions:
        values, weights = _arrays(condition)
        mean = _weighted_mean(values, weights)

        def statistic(
            picked: NDArray[np.float64],
            values: NDArray[np.float64] = values,
            weights: NDArray[np.float64] = weights,
        ) -> float:
            index = picked.astype(np.intp)
            return _weighted_mean(values[index], weights[index])

        ci = bootstrap_ci(
            [float(i) for i in range(len(values))],
            statistic=statistic,
            n_resamples=n_resamples,
            rng=rng,
        )
        out.append(
            CurvePoint(
                direction=condition.direction,
                alpha=condition.alpha,
                n=len(values),
                mean=mean,
                sd=statistics.stdev(values.tolist()) if len(values) > 1 else 0.0,
                ci_low=ci.low,
                ci_high=ci.high,
                incoherent=condition.incoherent,
                extra=dict(condition.extra),
                values=dict(condition.values),
                relative_drop=1.0 - mean / baseline if baseline else None,
                per_unit={u: dict(v) for u, v in condition.per_unit.items()},
                overlaps_extraction=condition.overlaps_extraction,
            )
        )
    return out


def _slope(alphas: NDArray[np.float64], values: NDArray[np.float64]) -> float | None:
    """Least-squares slope of values on alphas; None when all alphas are equal."""
    centred = alphas - alphas.mean()
    denominator = float(centred @ centred)
    if denominator == 0:
        return None
    return float(centred @ (values - values.mean()) / denominator)


def trend(
    direction: str,
    conditions: Sequence[DoseCondition],
    *,
    n_resamples: int = 2000,
    seed: int = 0,
) -> Trend:
    """Spearman rho and slope (with its cluster CI) of ``direction``'s curve, baseline
    included."""
    cells = [c for c in conditions if c.direction in (direction, BASELINE)]
    units = sorted({unit for c in cells for unit in c.values})
    by_unit = {
        unit: [(c.alpha, c.values[unit]) for c in cells if unit in c.values] for unit in units
    }
    points = [point for unit in units for point in by_unit[unit]]
    alphas = np.array([a for a, _ in points], dtype=float)
    values = np.array([v for _, v in points], dtype=float)
    rho: float | None = None
    rho_p: float | None = None
    if len(set(alphas.tolist())) > 1 and len(set(values.tolist())) > 1:
        result = scipy_stats.spearmanr(alphas, values)
        rho, rho_p = float(result.statistic), float(result.pvalue)
        if math.isnan(rho):
            rho = rho_p = None
    low = high = None
    dropped = 0
    if len(units) >= 2:
        rng = np.random.default_rng(seed)
        slopes = []
        for _ in range(n_resamples):
            chosen = rng.integers(0, len(units), size=len(units))
            sample = [point for i in chosen for point in by_unit[units[i]]]
            slope = _slope(np.array([a for a, _ in sample]), np.array([v for _, v in sample]))
            if slope is None:
                dropped += 1
            else:
                slopes.append(slope)
        if slopes:
            low, high = (float(x) for x in np.percentile(slopes, [2.5, 97.5]))
    return Trend(
        direction=direction,
        rho=rho,
        rho_p=rho_p,
        slope=_slope(alphas, values),
        slope_low=low,
        slope_high=high,
        points=len(points),
        dropped=dropped,
        resamples=n_resamples if len(units) >= 2 else 0,
    )
