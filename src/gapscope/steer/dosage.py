"""The dosage curve: a metric per (direction, alpha), and how monotone each direction is.

Plain numbers in, plain numbers out (no model, no Inspect). A *condition* is one direction at
one alpha; it holds the metric of every unit (an S2B episode seed, or a miniF2F problem) and
the share of incoherent outputs (S2B: unparseable answers; prove: parse/elaboration errors or
empty extractions). alpha = 0 is the unsteered baseline and belongs to every direction's curve.

Per condition: mean and sample sd over units and a percentile bootstrap CI of the mean. Per
direction: Spearman's rho between alpha and the per-unit metric (all points, baseline
included), and the least-squares slope with a cluster-bootstrap CI that resamples units, so
the points of one unit stay together. A CLB direction should show a large |rho| and a slope
CI away from 0; a control, rho near 0 and a slope CI around 0.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats as scipy_stats

from gapscope.stats.resampling import bootstrap_ci

BASELINE = "baseline"
"""The direction name of the alpha = 0 condition, shared by every curve."""


@dataclass(frozen=True)
class Condition:
    """One cell of the grid: ``values[unit]`` is the metric of that unit under it."""

    direction: str
    alpha: float
    values: Mapping[str, float]
    incoherent: float
    extra: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class CurvePoint:
    direction: str
    alpha: float
    n: int
    mean: float
    sd: float
    ci_low: float
    ci_high: float
    incoherent: float
    extra: Mapping[str, float]
    values: Mapping[str, float]
    """The metric of every unit (per seed, per problem: the seed's Figure 6)."""


@dataclass(frozen=True)
class Trend:
    """Monotonicity of one direction's curve; ``rho`` is None when a side is constant."""

    direction: str
    rho: float | None
    rho_p: float | None
    slope: float
    slope_low: float
    slope_high: float
    points: int


def curve_points(
    conditions: Sequence[Condition], *, n_resamples: int = 2000, seed: int = 0
) -> list[CurvePoint]:
    """Summaries of every condition, in the given order."""
    rng = np.random.default_rng(seed)
    out = []
    for condition in conditions:
        values = list(condition.values.values())
        if not values:
            raise ValueError(f"condition {condition.direction} alpha={condition.alpha} is empty")
        mean = statistics.fmean(values)
        ci = bootstrap_ci(
            values, statistic=lambda a: float(a.mean()), n_resamples=n_resamples, rng=rng
        )
        out.append(
            CurvePoint(
                direction=condition.direction,
                alpha=condition.alpha,
                n=len(values),
                mean=mean,
                sd=statistics.stdev(values) if len(values) > 1 else 0.0,
                ci_low=ci.low,
                ci_high=ci.high,
                incoherent=condition.incoherent,
                extra=dict(condition.extra),
                values=dict(condition.values),
            )
        )
    return out


def _slope(alphas: np.ndarray[Any, Any], values: np.ndarray[Any, Any]) -> float:
    centred = alphas - alphas.mean()
    denominator = float(centred @ centred)
    return float(centred @ (values - values.mean()) / denominator) if denominator else 0.0


def trend(
    direction: str,
    conditions: Sequence[Condition],
    *,
    n_resamples: int = 2000,
    seed: int = 0,
) -> Trend:
    """Spearman rho and slope (with CI) of ``direction``'s curve, baseline included."""
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
    rng = np.random.default_rng(seed)
    resampled = []
    for _ in range(n_resamples):
        chosen = rng.integers(0, len(units), size=len(units))
        sample = [point for i in chosen for point in by_unit[units[i]]]
        resampled.append(_slope(np.array([a for a, _ in sample]), np.array([v for _, v in sample])))
    low, high = np.percentile(resampled, [2.5, 97.5])
    return Trend(
        direction=direction,
        rho=rho,
        rho_p=rho_p,
        slope=_slope(alphas, values),
        slope_low=float(low),
        slope_high=float(high),
        points=len(points),
    )
