"""O-NNG statistics: correct rate and latency per model and noise level, and tests of a
lambda effect.

The unit is one sample (problem x lambda). Across the lambda groups of one model we run a
one-way ANOVA (``scipy.stats.f_oneway``) and a Kruskal-Wallis test on three per-sample
outcomes: correctness (0/1, the paper's robustness question), inference seconds and output
tokens (the "latency tax"). ANOVA is what the paper reports; Kruskal-Wallis is the rank-based
check that does not assume normal residuals, which 0/1 outcomes and skewed latencies violate.
A test is None when it is undefined (fewer than two groups, or no variation at all).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from scipy import stats

OUTCOMES = ("correct", "inference_s", "output_tokens")


@dataclass(frozen=True)
class Record:
    """One graded sample."""

    model: str
    problem: str
    module: str
    lam: float
    correct: bool
    status: str | None
    parse_status: str
    inference_s: float
    output_tokens: int | None


@dataclass(frozen=True)
class TestResult:
    statistic: float
    p_value: float


def _test(kind: str, groups: Sequence[Sequence[float]]) -> TestResult | None:
    groups = [g for g in groups if g]
    if len(groups) < 2 or len({v for g in groups for v in g}) < 2:
        return None
    if kind == "anova":
        if all(len(set(g)) == 1 for g in groups) or sum(len(g) for g in groups) <= len(groups):
            return None
        stat, p = stats.f_oneway(*groups)
    else:
        stat, p = stats.kruskal(*groups)
    if math.isnan(float(stat)):
        return None
    return TestResult(float(stat), float(p))


def _values(records: Iterable[Record], outcome: str) -> list[float]:
    values: list[float] = []
    for r in records:
        v = getattr(r, outcome)
        if v is not None:
            values.append(float(v))
    return values


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def summarize(records: Sequence[Record]) -> dict[str, Any]:
    """Per model: a row per lambda (n, correct rate, mean latency and tokens, parse statuses,
    verdicts - Lean's, ``disallowed_tactic``/``statement_changed`` from the checks before
    Lean, ``unchecked`` without a usable answer), the robustness curve, and
    ANOVA/Kruskal-Wallis per outcome across lambda."""
    by_model: dict[str, dict[float, list[Record]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        by_model[r.model][r.lam].append(r)
    models: dict[str, Any] = {}
    for model, by_lam in sorted(by_model.items()):
        lams = sorted(by_lam)
        rows = []
        for lam in lams:
            group = by_lam[lam]
            parse: dict[str, int] = defaultdict(int)
            verdicts: dict[str, int] = defaultdict(int)
            for r in group:
                parse[r.parse_status] += 1
                verdicts[r.status or "unchecked"] += 1
            rows.append(
                {
                    "lam": lam,
                    "n": len(group),
                    "correct_rate": _mean(_values(group, "correct")),
                    "mean_inference_s": _mean(_values(group, "inference_s")),
                    "mean_output_tokens": _mean(_values(group, "output_tokens")),
                    "parse_status": dict(sorted(parse.items())),
                    "verdicts": dict(sorted(verdicts.items())),
                }
            )
        tests: dict[str, Any] = {}
        for outcome in OUTCOMES:
            groups = [_values(by_lam[lam], outcome) for lam in lams]
            anova = _test("anova", groups)
            kruskal = _test("kruskal", groups)
            tests[outcome] = {
                "anova": asdict(anova) if anova else None,
                "kruskal": asdict(kruskal) if kruskal else None,
            }
        models[model] = {
            "by_lam": rows,
            "curve": [(row["lam"], row["correct_rate"]) for row in rows],
            "tests": tests,
        }
    return {"models": models}


def records_from_log(log: Any, model: str | None = None) -> list[Record]:
    """The graded samples of an ``onng`` Inspect log (an ``EvalLog`` with samples)."""
    name = model or str(log.eval.model)
    records: list[Record] = []
    for sample in log.samples or []:
        score = next(iter((sample.scores or {}).values()), None)
        meta: dict[str, Any] = (score.metadata if score and score.metadata else {}) or {}
        records.append(
            Record(
                model=name,
                problem=str(sample.metadata["problem"]),
                module=str(sample.metadata["module"]),
                lam=float(sample.metadata["lam"]),
                correct=bool(score is not None and score.value == "C"),
                status=meta.get("status"),
                parse_status=str(meta.get("parse_status", "no_json")),
                inference_s=float(meta.get("inference_s", 0.0)),
                output_tokens=meta.get("output_tokens"),
            )
        )
    return records
