"""T2's metrics per context setting, with bootstrap intervals over records.

The unit of resampling is the record (a record's samples - ``-k`` of them - move together),
so every interval reflects how the numbers would move on another draw of problems. The Hard
subset (Prop-typed targets, the paper's "T2 Hard") gets its own compile and TA. Samples
whose check failed on the backend (``server_error``) establish nothing: they are left out of
every denominator and listed. ``renamed``, ``no_answer`` and ``forbidden_command`` samples
are failed answers: they stay in the denominators and are counted separately.

Under the released evaluator's rules (``Rules.T2``) the unit is a row of the data file (a
duplicated id counts once per row), a record passes when any of its samples passes, and a
``server_error`` is a failure in the denominator (:mod:`gapscope.t2.rules`). Every context
also carries the BLEU contrast: TA per BLEU bucket (:mod:`gapscope.t2.bleu`; the rules pick
the BLEU, :func:`gapscope.t2.rules.bleu_metric`), with T2's own per-record BLEU-4 and exact
match beside it. P(TA | compile) is reported for the full set and for the Hard subset: the
paper's 6.89 % cannot be a full-set figure (docs/t2.md, Precision).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from gapscope.stats import BootstrapCI, bootstrap_ci
from gapscope.t2.bleu import SIGNATURES, BleuMetric, ta_by_bleu
from gapscope.t2.contract import ScoredSample
from gapscope.t2.evaluate import SampleOutcome
from gapscope.t2.rules import Rules, bleu_metric

RATES = ("compile", "ta", "ta_strict", "graded")


HARD_RATES = ("compile", "ta")
"""The rates reported for the Hard subset, as the paper's table has them."""


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
    samples: Sequence[ScoredSample],
    *,
    rules: Rules = Rules.GAPSCOPE,
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict[str, Any]:
    """Every metric of one context setting (see the module docstring for denominators;
    ``rules`` picks gapscope's counting or the released evaluator's, :mod:`gapscope.t2.rules`)."""
    rng = np.random.default_rng(seed)
    released = rules is Rules.T2
    counted = [s for s in samples if released or s.outcome != SampleOutcome.SERVER_ERROR]
    server_errors = sorted({s.record for s in samples if s.outcome == SampleOutcome.SERVER_ERROR})
    by_record: defaultdict[str, list[ScoredSample]] = defaultdict(list)
    for s in counted:
        by_record[s.record].append(s)
    units = [_Unit(group, released) for group in by_record.values()]
    out: dict[str, Any] = {
        "rules": rules.value,
        "records": len(units),
        "rows": sum(u.rows for u in units),
        "samples": len(counted),
        "outcomes": {o: sum(s.outcome == o for s in samples) for o in SampleOutcome},
        "server_error_records": server_errors,
        "bleu": _bleu(counted, bleu_metric(rules)),
        "refinement": refinement(counted),
        "beq": equivalence_rates(counted),
    }
    if not units:
        out.update(dict.fromkeys(RATES))
        out.update(compile_precision=None, ta_by_successors=[])
        out["hard"] = {
            "records": 0,
            "rows": 0,
            **dict.fromkeys(HARD_RATES),
            "compile_precision": None,
        }
        return out
    for rate in RATES:
        out[rate] = _rate_ci(_tested(units) if rate == "graded" else units, rate, rng, n_resamples)
    out["compile_precision"] = _precision(units, rng, n_resamples)
    out["ta_by_successors"] = _ta_by_successors(units)
    hard = [u for u in units if u.hard]
    out["hard"] = {
        "records": len(hard),
        "rows": sum(u.rows for u in hard),
        **{rate: _rate_ci(hard, rate, rng, n_resamples) for rate in HARD_RATES},
        "compile_precision": _precision(hard, rng, n_resamples),
    }
    return out


def refinement(samples: Sequence[ScoredSample]) -> dict[str, Any] | None:
    """What compile feedback changed (``refine``), over the samples it ran on: the share
    whose first answer compiled, the share whose last answer does, the samples revised (at
    least once), the revisions in all, and ``fixed``: revised samples that compile at the end.
    None without refinement. Whether it changed TA is the paper's comparison of two runs
    (``refine`` 0 and R), each with its TA."""
    tried = [s for s in samples if s.first_compiles is not None]
    if not tried:
        return None
    revised = [s for s in tried if s.refine_revisions]
    return {
        "samples": len(tried),
        "first_compile": sum(bool(s.first_compiles) for s in tried) / len(tried),
        "compile": sum(s.compiles for s in tried) / len(tried),
        "revised": len(revised),
        "revisions": sum(s.refine_revisions for s in tried),
        "fixed": sum(s.compiles for s in revised),
    }


def equivalence_rates(samples: Sequence[ScoredSample]) -> dict[str, Any] | None:
    """Compile, TA, BEqL and BEq+ side by side over the same samples: those with a BEq
    verdict (theorem answers Lean checked). None without ``beq``."""
    compared = [s for s in samples if s.beql is not None]
    if not compared:
        return None
    n = len(compared)
    return {
        "samples": n,
        "compile": sum(s.compiles for s in compared) / n,
        "ta": sum(s.ta for s in compared) / n,
        "beql": sum(bool(s.beql) for s in compared) / n,
        "beq_plus": sum(bool(s.beq_plus) for s in compared) / n,
    }


def _precision(
    units: Sequence[_Unit], rng: np.random.Generator, n_resamples: int
) -> dict[str, float | None] | None:
    """P(TA | compile): samples (released rules: rows) that compile and pass TA over those
    that compile; None when nothing compiles."""
    compiled = _rows_of(units, lambda u: u.count("compile"))
    both = _rows_of(units, lambda u: u.count("compile_and_ta"))
    return _ci(_ratio_ci(both, compiled, rng, n_resamples))


class _Unit:
    """One record's samples as a unit of the denominator, which spans ``rows`` rows.

    gapscope's rules: a rate is the mean over the record's samples, one row. The released
    evaluator's: the record passes when any of its samples passes (pass@k), and the data file's
    every row with its id is in the denominator, while the id has one result (its harness keys
    generations by id): one row gets the value, the other ``rows - 1`` fail, as ids without a
    result do (its shipped summaries: 377 results, 400 questions, 23 missing).
    """

    def __init__(self, samples: list[ScoredSample], released: bool) -> None:
        self.samples = samples
        self.released = released
        self.rows = samples[0].rows if released else 1
        self.hard = samples[0].hard
        self.successors = samples[0].successors

    def value(self, rate: str) -> float:
        """The record's rate: the mean of its samples, or (released rules) their maximum."""
        values = [_value(s, rate) for s in self.samples]
        return float(max(values) if self.released else np.mean(values))

    def count(self, rate: str) -> float:
        """Samples passing ``rate`` (released rules: 1 when any does), for ratios of counts."""
        values = [_value(s, rate) for s in self.samples]
        return float(max(values) if self.released else sum(values))


def _tested(units: Sequence[_Unit]) -> list[_Unit]:
    """The units graded TA is defined for: records with at least one successor (a share of
    no successors is no number; the released rules keep such records)."""
    return [u for u in units if u.successors > 0]


def _rows_of(units: Sequence[_Unit], of: Callable[[_Unit], float]) -> NDArray[np.float64]:
    """One value per row of the denominator: a unit's value, then 0 for each further row
    of its id (no result of its own)."""
    values: list[float] = []
    for u in units:
        values += [of(u)] + [0.0] * (u.rows - 1)
    return np.array(values, dtype=float)


def _rate_ci(
    units: Sequence[_Unit], rate: str, rng: np.random.Generator, n_resamples: int
) -> dict[str, float | None] | None:
    """A rate's mean over the rows of ``units``, with its interval."""
    if not units:
        return None
    per_row = [float(v) for v in _rows_of(units, lambda u: u.value(rate))]
    return _ci(bootstrap_ci(per_row, statistic=_mean, n_resamples=n_resamples, rng=rng))


def _value(sample: ScoredSample, rate: str) -> float:
    if rate == "graded":
        return sample.graded or 0.0
    if rate == "compile_and_ta":
        return float(sample.compiles and sample.ta)
    return float({"compile": sample.compiles, "ta": sample.ta, "ta_strict": sample.ta_strict}[rate])


def _mean(values: NDArray[np.float64]) -> float:
    return float(values.mean())


def _ta_by_successors(units: Sequence[_Unit]) -> list[dict[str, Any]]:
    """TA per number of successors (the paper: more successors, stricter test)."""
    groups: defaultdict[int, list[_Unit]] = defaultdict(list)
    for u in units:
        groups[u.successors].append(u)
    return [
        {
            "successors": n,
            "samples": sum(len(u.samples) for u in group),
            "records": len(group),
            "ta": float(_rows_of(group, lambda u: u.value("ta")).mean()),
            "graded": float(_rows_of(group, lambda u: u.value("graded")).mean()) if n else None,
        }
        for n, group in sorted(groups.items())
    ]


def _bleu(samples: Sequence[ScoredSample], metric: BleuMetric) -> dict[str, Any]:
    """Mean BLEU and TA per BLEU bucket under ``metric`` over the samples that have a score,
    with T2's own summary numbers beside them (:func:`_t2_text_metrics`)."""
    scored = [(b, s.ta) for s in samples if (b := s.bleu_of(metric)) is not None]
    return {
        "metric": metric.value,
        "signature": SIGNATURES[metric],
        "samples": len(scored),
        "mean": float(np.mean([b for b, _ in scored])) if scored else None,
        "by_bucket": ta_by_bleu(scored),
        **_t2_text_metrics(samples),
    }


def _t2_text_metrics(samples: Sequence[ScoredSample]) -> dict[str, float | None]:
    """T2's ``bleu_score`` and ``em_rate`` as its evaluator makes them: the released BLEU-4
    and exact match averaged over each record's samples, then over the records that have a
    generation (``t2_bleu4`` 0-100, ``t2_exact_match`` a share)."""
    per_record: defaultdict[str, list[ScoredSample]] = defaultdict(list)
    for s in samples:
        if s.bleu_t2 is not None and s.exact_match is not None:
            per_record[s.record].append(s)
    if not per_record:
        return {"t2_bleu4": None, "t2_exact_match": None}
    groups = per_record.values()
    return {
        "t2_bleu4": float(np.mean([np.mean([s.bleu_t2 for s in g]) for g in groups])),
        "t2_exact_match": float(np.mean([np.mean([s.exact_match for s in g]) for g in groups])),
    }


def with_missing(
    samples: Sequence[ScoredSample], planned: Sequence[ScoredSample], contexts: Sequence[str]
) -> list[ScoredSample]:
    """``samples`` plus a failing ``missing`` sample for each planned record a context has no
    sample of (``planned``: one template sample per record; its context is replaced). The
    released evaluator's denominator is the data file: an id without a result fails."""
    seen = {(s.context, s.record) for s in samples}
    missing = [
        replace(p, context=context, outcome=SampleOutcome.MISSING)
        for context in contexts
        for p in planned
        if (context, p.record) not in seen
    ]
    return [*samples, *missing]


def summarize(
    samples: Sequence[ScoredSample],
    *,
    order: Sequence[str] = (),
    rules: Rules = Rules.GAPSCOPE,
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
        name: summarize_context(group, rules=rules, n_resamples=n_resamples, seed=seed)
        for name, group in contexts.items()
    }
