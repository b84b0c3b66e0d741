"""O-NNG logs -> correct rate and latency per model and noise level, and tests of a lambda effect.

The unit is one sample (problem x lambda). Across the lambda groups of one model we run a
one-way ANOVA and a Kruskal-Wallis test (:mod:`gapscope.stats.groups`) on three per-sample
outcomes: correctness (0/1, the paper's robustness question), inference seconds and output
tokens (the "latency tax"). A test is None when it is undefined.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, cast

from inspect_ai.scorer import CORRECT

from gapscope.analysis.logs import (
    counted_samples,
    malformed_sample,
    read_log,
    require_task,
    run_info,
    sample_score,
)
from gapscope.analysis.profile import GapRow
from gapscope.onng import TASK, AttemptRecord, ProblemMetadata
from gapscope.stats import GroupTest, kruskal_wallis, one_way_anova, wilson_percent

if TYPE_CHECKING:
    from pathlib import Path

    from inspect_ai.log import EvalLog

DIAGNOSTIC = "O-NNG"
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
    log: str = ""


@dataclass(frozen=True)
class LambdaRow:
    """One noise level of one model."""

    lam: float
    n: int
    correct: int
    mean_inference_s: float | None
    mean_output_tokens: float | None
    parse_status: dict[str, int]
    verdicts: dict[str, int]
    """Lean's verdicts, the checks before Lean (``forbidden_command``, ``disallowed_tactic``,
    ``statement_changed``), ``unchecked`` without a usable answer."""

    @property
    def correct_rate(self) -> float:
        return self.correct / self.n


@dataclass(frozen=True)
class LambdaEffect:
    """Does ``outcome`` change with lambda? Both tests, None where undefined."""

    anova: GroupTest | None
    kruskal: GroupTest | None


@dataclass(frozen=True)
class ModelSummary:
    """One model: a row per lambda and the tests of a lambda effect per outcome."""

    model: str
    logs: tuple[str, ...]
    by_lam: list[LambdaRow]
    tests: dict[str, LambdaEffect]
    solved: dict[float, dict[str, bool]]

    @property
    def curve(self) -> list[tuple[float, float]]:
        """Correct rate against lambda: the robustness curve."""
        return [(row.lam, row.correct_rate) for row in self.by_lam]

    def rows(self) -> list[GapRow]:
        return [
            GapRow(
                model=self.model,
                diagnostic=DIAGNOSTIC,
                metric=f"correct [lambda={row.lam:g}]",
                value=100 * row.correct_rate,
                ci=wilson_percent(row.correct, row.n),
                n=row.n,
                log=", ".join(self.logs),
            )
            for row in self.by_lam
        ]

    def outcomes(self) -> dict[str, dict[str, bool]]:
        return {f"correct [lambda={lam:g}]": items for lam, items in self.solved.items()}

    def to_dict(self) -> dict[str, Any]:
        return {
            "logs": list(self.logs),
            "by_lam": [asdict(row) | {"correct_rate": row.correct_rate} for row in self.by_lam],
            "curve": self.curve,
            "tests": {
                outcome: {
                    "anova": asdict(t.anova) if t.anova else None,
                    "kruskal": asdict(t.kruskal) if t.kruskal else None,
                }
                for outcome, t in self.tests.items()
            },
        }


@dataclass(frozen=True)
class ONNGSummary:
    """Every model of an O-NNG report."""

    models: dict[str, ModelSummary]

    def rows(self) -> list[GapRow]:
        return [row for m in self.models.values() for row in m.rows()]

    def outcomes(self) -> dict[str, dict[str, bool]]:
        merged: dict[str, dict[str, bool]] = {}
        for m in self.models.values():
            for metric, items in m.outcomes().items():
                merged.setdefault(metric, {}).update(items)
        return merged

    def to_dict(self) -> dict[str, Any]:
        return {"models": {name: m.to_dict() for name, m in self.models.items()}}


ALPHA = 0.05
"""The level below which a lambda effect is called one in the report's verdict."""


def verdict(summary: ONNGSummary, row: GapRow) -> str:
    """The trend over lambda, for the report's first table: the correct rate at the lowest
    and the highest lambda, called a fall or a rise only where the Kruskal-Wallis test across
    the lambda groups rejects no effect (p < :data:`ALPHA`)."""
    model = summary.models.get(row.model)
    if model is None or not model.by_lam:
        return ""
    first, last = model.by_lam[0], model.by_lam[-1]
    if first is last:
        return f"one noise level (lambda={first.lam:g}): no trend to read"
    span = (
        f"{100 * first.correct_rate:.0f} % at lambda={first.lam:g} to "
        f"{100 * last.correct_rate:.0f} % at lambda={last.lam:g}"
    )
    test = model.tests["correct"].kruskal
    if test is None:  # one outcome in every group: nothing varies
        return f"the same at every lambda ({100 * first.correct_rate:.0f} % correct)"
    if test.p_value >= ALPHA:
        return f"no lambda effect (Kruskal-Wallis p={test.p_value:.2g}): {span}"
    said = f"(Kruskal-Wallis p={test.p_value:.2g})"
    if last.correct_rate == first.correct_rate:  # an effect between the ends
        return f"correct changes with lambda {said}: {span}"
    moved = "falls" if last.correct_rate < first.correct_rate else "rises"
    return f"correct {moved} from {span} {said}"


def _values(records: Iterable[Record], outcome: str) -> list[float]:
    return [float(v) for r in records if (v := getattr(r, outcome)) is not None]


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def summarize(records: Sequence[Record]) -> ONNGSummary:
    """Per model: a row per lambda (n, correct rate, mean latency and tokens, parse
    statuses), and ANOVA/Kruskal-Wallis per outcome across lambda."""
    by_model: dict[str, dict[float, list[Record]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        by_model[r.model][r.lam].append(r)
    models: dict[str, ModelSummary] = {}
    for model, by_lam in sorted(by_model.items()):
        lams = sorted(by_lam)
        rows = [
            LambdaRow(
                lam=lam,
                n=len(by_lam[lam]),
                correct=sum(r.correct for r in by_lam[lam]),
                mean_inference_s=_mean(_values(by_lam[lam], "inference_s")),
                mean_output_tokens=_mean(_values(by_lam[lam], "output_tokens")),
                parse_status=dict(sorted(Counter(r.parse_status for r in by_lam[lam]).items())),
                verdicts=dict(
                    sorted(Counter(r.status or "unchecked" for r in by_lam[lam]).items())
                ),
            )
            for lam in lams
        ]
        tests = {}
        for outcome in OUTCOMES:
            groups = [_values(by_lam[lam], outcome) for lam in lams]
            tests[outcome] = LambdaEffect(one_way_anova(groups), kruskal_wallis(groups))
        logs = tuple(dict.fromkeys(r.log for group in by_lam.values() for r in group if r.log))
        solved = {lam: {r.problem: r.correct for r in by_lam[lam]} for lam in lams}
        models[model] = ModelSummary(model, logs, rows, tests, solved)
    return ONNGSummary(models)


def records_from_log(log: EvalLog, model: str | None = None) -> list[Record]:
    """The graded samples of an ``onng`` Inspect log."""
    require_task(log, TASK)
    info = run_info(log)
    name = model or info.model
    records: list[Record] = []
    for sample in counted_samples(log):
        with malformed_sample(log, sample):
            score = sample_score(sample)
            meta = cast(AttemptRecord, (score.metadata if score and score.metadata else {}) or {})
            problem = cast(ProblemMetadata, sample.metadata)
            records.append(
                Record(
                    model=name,
                    problem=str(problem["problem"]),
                    module=str(problem["module"]),
                    lam=float(problem["lam"]),
                    correct=bool(score is not None and score.value == CORRECT),
                    status=meta.get("status"),
                    parse_status=str(meta.get("parse_status", "no_json")),
                    inference_s=float(meta.get("inference_s", 0.0)),
                    output_tokens=meta.get("output_tokens"),
                    log=info.location,
                )
            )
    return records


def read(path: Path | str) -> list[Record]:
    """The graded samples of one O-NNG log file."""
    return records_from_log(read_log(path, task=TASK))
