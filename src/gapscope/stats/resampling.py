"""Bootstrap over families: confidence intervals and pairwise ranking stability.

Families are the unit of resampling (seed, Appendix F): a resample draws n families with
replacement and recomputes each model's statistic on the *same* draw, so comparisons between
models are paired. Intervals are percentile intervals.

A resample of one family is that family again, so its "interval" would have zero width and
look like certainty; over fewer than two families the estimate stands alone and the interval
is absent (``low``/``high`` None), which callers show as "n/a".
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
from numpy.typing import NDArray

Statistic = Callable[[NDArray[np.float64]], float]

Rng = np.random.Generator | np.random.RandomState
"""A seeded source of resamples: numpy's Generator, or the legacy Mersenne Twister stream that
``np.random.seed`` drives (the OracleLadder authors' scripts use it)."""


class BootstrapScheme(StrEnum):
    """Whose resampling a report uses; both draw families with replacement, paired across models.

    The schemes differ in random stream, count and draw order, so their resampled numbers
    differ within noise (OutcomeRL-2K above MilestoneRL-2K on the released panel: 79.7% under
    ``gapscope`` with seed 0 and 2,000 resamples, 80.5% under ``authors``, "81%" in the paper).
    """

    GAPSCOPE = "gapscope"
    """The default: a PCG64 Generator seeded by the caller, 2,000 resamples, every statistic
    drawn on its own resamples in turn, families in the order the run lists them."""
    AUTHORS = "authors"
    """The authors' ``bootstrap_fingerprint_cis.py``: ``np.random.seed(42)``, 1,000 resamples,
    each ``np.random.randint(0, n, size=n)`` over the families sorted by pid, one set of
    resamples behind every interval and ordering frequency. It reproduces their Appendix F
    tables digit for digit."""


AUTHORS_SEED = 42
AUTHORS_RESAMPLES = 1000
GAPSCOPE_RESAMPLES = 2000


def default_resamples(scheme: BootstrapScheme) -> int:
    """The resample count ``scheme`` uses unless told otherwise."""
    return AUTHORS_RESAMPLES if scheme is BootstrapScheme.AUTHORS else GAPSCOPE_RESAMPLES


def scheme_rng(scheme: BootstrapScheme, seed: int) -> Rng:
    """A fresh stream for ``scheme``: the authors' always starts at their seed, so every
    statistic built on a fresh one sees the same resamples, as in their single loop."""
    if scheme is BootstrapScheme.AUTHORS:
        return np.random.RandomState(AUTHORS_SEED)
    return np.random.default_rng(seed)


def _sum(values: NDArray[np.float64]) -> float:
    return float(values.sum())


@dataclass(frozen=True)
class BootstrapCI:
    """A point estimate and its percentile interval (None over fewer than two families)."""

    estimate: float
    low: float | None
    high: float | None
    confidence: float
    n_resamples: int

    @property
    def interval(self) -> tuple[float, float] | None:
        """``(low, high)``, or None where no interval can be resampled."""
        if self.low is None or self.high is None:
            return None
        return self.low, self.high


def _resample_indices(n: int, n_resamples: int, rng: Rng) -> NDArray[np.intp]:
    if n < 1:
        raise ValueError("need at least one family to resample")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    if isinstance(rng, np.random.RandomState):
        # one call per resample, in the authors' order of draws from the legacy stream
        return np.stack([rng.randint(0, n, size=n) for _ in range(n_resamples)])
    return rng.integers(0, n, size=(n_resamples, n))


def bootstrap_ci(
    values: Sequence[float],
    *,
    statistic: Statistic = _sum,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    rng: Rng,
) -> BootstrapCI:
    """Percentile bootstrap interval of ``statistic`` over per-family ``values``; a single
    family has its estimate and no interval (no variation between families can be seen). No
    family is an error."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    data = np.asarray(values, dtype=np.float64)
    if len(data) == 1:
        return BootstrapCI(statistic(data), None, None, confidence, 0)
    draws = _resample_indices(len(data), n_resamples, rng)
    stats = np.array([statistic(data[idx]) for idx in draws])
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(stats, [alpha, 1.0 - alpha])
    return BootstrapCI(
        estimate=statistic(data),
        low=float(low),
        high=float(high),
        confidence=confidence,
        n_resamples=n_resamples,
    )


@dataclass(frozen=True)
class PairwiseStability:
    """Share of resamples in which ``a`` scores strictly above ``b``, and ties."""

    a: str
    b: str
    a_beats_b: float
    ties: float


def ranking_stability(
    per_family: Mapping[str, Sequence[float]],
    *,
    statistic: Statistic = _sum,
    n_resamples: int = 10_000,
    rng: Rng,
) -> list[PairwiseStability]:
    """For every ordered pair of models, how often A beats B on a paired family resample.

    ``per_family`` maps a model name to its per-family values, aligned on the same families.
    """
    names = list(per_family)
    lengths = {len(v) for v in per_family.values()}
    if len(lengths) > 1:
        raise ValueError(f"models are not aligned on the same families: lengths {sorted(lengths)}")
    data = {name: np.asarray(per_family[name], dtype=np.float64) for name in names}
    draws = _resample_indices(lengths.pop() if lengths else 0, n_resamples, rng)
    scores = {name: np.array([statistic(data[name][idx]) for idx in draws]) for name in names}
    return [
        PairwiseStability(
            a=a,
            b=b,
            a_beats_b=float(np.mean(scores[a] > scores[b])),
            ties=float(np.mean(scores[a] == scores[b])),
        )
        for a, b in itertools.permutations(names, 2)
    ]
