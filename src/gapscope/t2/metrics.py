"""T2's metrics per context setting, with bootstrap intervals over records.

The unit of resampling is the record (a record's samples - ``-k`` of them - move together),
so every interval reflects how the numbers would move on another draw of problems. Samples
whose check failed on the backend (``server_error``) establish nothing: they are left out of
every denominator and listed. ``renamed``, ``no_answer`` and ``forbidden_command`` samples
are failed answers: they stay in the denominators and are counted separately.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from gapscope.stats.resampling import BootstrapCI, bootstrap_ci
from gapscope.t2.evaluate import SampleOutcome

RATES = ("compile", "ta", "ta_strict", "graded")


@dataclass(frozen=True)
class ScoredSample:
    """One sample as the metrics see it (read back from a log or made in a test)."""

    record: str
    context: str
    outcome: str
    compiles: bool
    ta: bool
    ta_strict: bool
    graded: float | None
    successors: int


def _ci(ci: BootstrapCI | None) -> dict[str, float | None] | None:
    if ci is None:
        return None
    return {"estimate": ci.estimate, "low": ci.low, "high": ci.high}


def _ratio_ci(
    numerators: NDArray[np.float64],
    denominators: NDArray[np.float64],
    rng: np.random.Generator,
    n_resamples: int,
) -> BootstrapCI | None:
    """Interval of sum(num)/sum(den), resampling the records with den > 0 (None if none).

    Records with a zero denominator add nothing to either sum, so leaving them out of the
    resampling changes no estimate and keeps every resample's ratio defined.
    """
    keep = denominators > 0
    num, den = numerators[keep], denominators[keep]
    if not len(den):
        return None

    def ratio(picked: NDArray[np.float64]) -> float:
        idx = picked.astype(np.intp)
        return float(num[idx].sum() / den[idx].sum())

    return bootstrap_ci(
        [float(i) for i in range(len(den))],
        statistic=ratio,
        n_resamples=n_resamples,
        rng=rng,
    )


def summarize_context(
    samples: Sequence[ScoredSample], *, n_resamples: int = 2000, seed: int = 0
) -> dict[str, Any]:
    """Every metric of one context setting (see the module docstring for denominators)."""
    rng = np.random.default_rng(seed)
    counted = [s for s in samples if s.outcome != SampleOutcome.SERVER_ERROR]
    server_errors = sorted({s.record for s in samples if s.outcome == SampleOutcome.SERVER_ERROR})
    by_record: defaultdict[str, list[ScoredSample]] = defaultdict(list)
    for s in counted:
        by_record[s.record].append(s)
    records = list(by_record)
    out: dict[str, Any] = {
        "records": len(records),
        "samples": len(counted),
        "outcomes": {
            o: sum(s.outcome == o for s in samples)
            for o in (
                SampleOutcome.CHECKED,
                SampleOutcome.RENAMED,
                SampleOutcome.NO_ANSWER,
                SampleOutcome.FORBIDDEN,
                SampleOutcome.SERVER_ERROR,
            )
        },
        "server_error_records": server_errors,
    }
    if not records:
        out.update(dict.fromkeys(RATES))
        out.update(compile_precision=None, ta_by_successors=[])
        return out
    for rate in RATES:
        per_record = [float(np.mean([_value(s, rate) for s in by_record[r]])) for r in records]
        out[rate] = _ci(bootstrap_ci(per_record, statistic=_mean, n_resamples=n_resamples, rng=rng))
    compiled = np.array([sum(s.compiles for s in by_record[r]) for r in records], dtype=float)
    both = np.array([sum(s.compiles and s.ta for s in by_record[r]) for r in records], dtype=float)
    out["compile_precision"] = _ci(_ratio_ci(both, compiled, rng, n_resamples))
    out["ta_by_successors"] = _ta_by_successors(counted)
    return out


def _value(sample: ScoredSample, rate: str) -> float:
    if rate == "graded":
        return sample.graded or 0.0
    return float({"compile": sample.compiles, "ta": sample.ta, "ta_strict": sample.ta_strict}[rate])


def _mean(values: NDArray[np.float64]) -> float:
    return float(values.mean())


def _ta_by_successors(samples: Sequence[ScoredSample]) -> list[dict[str, Any]]:
    """TA per number of successors (the paper: more successors, stricter test)."""
    groups: defaultdict[int, list[ScoredSample]] = defaultdict(list)
    for s in samples:
        groups[s.successors].append(s)
    return [
        {
            "successors": n,
            "samples": len(group),
            "records": len({s.record for s in group}),
            "ta": float(np.mean([s.ta for s in group])),
            "graded": float(np.mean([s.graded or 0.0 for s in group])),
        }
        for n, group in sorted(groups.items())
    ]


def summarize(
    samples: Sequence[ScoredSample],
    *,
    order: Sequence[str] = (),
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict[str, dict[str, Any]]:
    """``summarize_context`` for each context setting: those in ``order`` first, in that
    order, then any other in first-seen order."""
    contexts: dict[str, list[ScoredSample]] = {}
    for name in order:
        if any(s.context == name for s in samples):
            contexts[name] = []
    for s in samples:
        contexts.setdefault(s.context, []).append(s)
    return {
        name: summarize_context(group, n_resamples=n_resamples, seed=seed)
        for name, group in contexts.items()
    }
