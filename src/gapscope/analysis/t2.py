"""``t2`` logs -> scored samples -> the per-context report (and the ground-truth invalid list).

The log is the only results format: each sample's score metadata holds its verdicts, the
task's metadata the records skipped before the run and why. The metrics themselves (bootstrap
CIs over records, denominators) are :mod:`gapscope.t2.metrics`; this module only reads.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict, cast

from gapscope.analysis.logs import counted_samples, malformed_sample, require_task, sample_score
from gapscope.analysis.profile import GapRow
from gapscope.t2 import (
    BUCKETS,
    TASK,
    UNTESTED_PATHS,
    Rules,
    RunMetadata,
    SampleOutcome,
    ScoredSample,
    parse_rules,
    summarize,
    with_missing,
)

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog

DIAGNOSTIC = "T2"
METRICS = {
    "compile": "compile",
    "ta": "TA (parity)",
    "ta_strict": "TA (strict)",
    "graded": "graded TA",
}
"""The per-context metrics that become gap-profile rows, with their display names."""
HARD_METRICS = {"compile": "compile (Hard)", "ta": "TA (parity) (Hard)"}
"""The Hard subset's metrics (theorem targets), rows of their own as in the paper."""
TOP = BUCKETS[-1]
"""The BLEU bucket of the paper's contrast (over 70 % of its samples fail TA)."""


class Interval(TypedDict):
    """A share with its bootstrap interval (``low``/``high`` None over a single record)."""

    estimate: float
    low: float | None
    high: float | None


class SuccessorCount(TypedDict):
    """TA over the records with ``successors`` successors (dependents)."""

    successors: int
    samples: int
    records: int
    ta: float
    graded: float | None


class BleuBucket(TypedDict):
    """One BLEU bucket: its label, the samples in it, their TA rate and the share failing TA."""

    bleu: str
    samples: int
    ta: float
    wrong: float


class BleuContrast(TypedDict):
    """TA per BLEU bucket under ``metric`` (:mod:`gapscope.t2.bleu`), with T2's own BLEU-4 and
    exact match beside it."""

    metric: str
    signature: str
    samples: int
    mean: float | None
    by_bucket: list[BleuBucket]
    t2_bleu4: float | None
    t2_exact_match: float | None


class HardSubset(TypedDict):
    """The Hard subset's (theorem targets') compile, TA and P(TA | compile)."""

    records: int
    rows: int
    compile: Interval | None
    ta: Interval | None
    compile_precision: Interval | None


class Refinement(TypedDict):
    """What compile feedback changed in one context (:func:`gapscope.t2.metrics.refinement`)."""

    samples: int
    first_compile: float
    compile: float
    revised: int
    revisions: int
    fixed: int


class EquivalenceRates(TypedDict):
    """Compile, TA, BEqL and BEq+ over the same samples (:func:`gapscope.t2.metrics.
    equivalence_rates`)."""

    samples: int
    compile: float
    ta: float
    beql: float
    beq_plus: float


class ContextReport(TypedDict):
    """One context setting's metrics, as :func:`gapscope.t2.metrics.summarize_context` makes
    them (``records``/``rows``: the denominators of gapscope's and of the released rules)."""

    rules: str
    records: int
    rows: int
    samples: int
    outcomes: dict[str, int]
    server_error_records: list[str]
    bleu: BleuContrast
    compile: Interval | None
    ta: Interval | None
    ta_strict: Interval | None
    graded: Interval | None
    compile_precision: Interval | None
    ta_by_successors: list[SuccessorCount]
    hard: HardSubset
    refinement: Refinement | None
    beq: EquivalenceRates | None


def read_samples(log: EvalLog) -> list[ScoredSample]:
    """Every scored sample of a ``t2`` log; a sample that errored before scoring counts as
    ``server_error`` (nothing is known about it but what its own metadata says)."""
    require_task(log, TASK)
    out: list[ScoredSample] = []
    for sample in counted_samples(log):
        with malformed_sample(log, sample):
            score = sample_score(sample)
            unscored = _unscored(sample.metadata)
            out.append(
                ScoredSample.from_metadata(score.metadata or {}, unscored)
                if score is not None
                else unscored
            )
    return out


def _unscored(meta: dict[str, Any]) -> ScoredSample:
    """A sample as its own metadata (the task's :func:`gapscope.t2.task._metadata`) has it,
    with no verdict: what an unscored sample counts as, and what a score read from a log
    written before a field existed keeps for that field."""
    return ScoredSample(
        record=str(meta.get("id")),
        context=str(meta.get("context")),
        outcome=SampleOutcome.SERVER_ERROR,
        compiles=False,
        ta=False,
        ta_strict=False,
        graded=None,
        successors=int(meta.get("successors", 0)),
        hard=bool(meta.get("hard", False)),
        rows=int(meta.get("rows", 1)),
    )


@dataclass(frozen=True)
class T2Summary:
    """One T2 run: the report dict (``to_dict``), its gap-profile rows and per-item outcomes."""

    report: dict[str, Any]
    samples: tuple[ScoredSample, ...]
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return self.report

    @property
    def model(self) -> str:
        return str(self.report["model"])

    @property
    def log(self) -> str:
        return str(self.report["log"])

    @property
    def rules(self) -> Rules:
        """The counting rules the numbers were made with (:mod:`gapscope.t2.rules`)."""
        return parse_rules(self.report["rules"])

    @property
    def unit(self) -> str:
        """What the denominators count: file rows under the released rules, else records."""
        return "rows" if self.rules is Rules.T2 else "records"

    @property
    def warnings(self) -> tuple[str, ...]:
        """The notes that change how the numbers are read (answers judged on an untested
        path, NL taken from the wrong field), for the run's cell in the report's first table;
        the counting rules' note says how they were made, not how to read them."""
        return tuple(note for note in self.notes if note != _rules_note(self.rules))

    @property
    def contexts(self) -> dict[str, ContextReport]:
        """Each context setting's metrics, in the run's order."""
        return cast(dict[str, ContextReport], self.report["contexts"])

    @property
    def records(self) -> int | None:
        """The records of the data file (None in a log that does not say)."""
        return cast(int | None, self.report["records"])

    @property
    def evaluated_records(self) -> int | None:
        return cast(int | None, self.report["evaluated_records"])

    @property
    def skipped(self) -> dict[str, int]:
        """Records skipped before the run, per reason."""
        return cast(dict[str, int], self.report["skipped"])

    @property
    def ground_truth_invalid(self) -> list[str] | None:
        """Of a ground-truth run, the records whose own target fails TA (else None)."""
        return cast(list[str] | None, self.report.get("ground_truth_invalid"))

    @property
    def prompting(self) -> str:
        """How the answers were asked for, when not the paper's one-pass zero-shot default
        ("2-shot", "refine 3"): a run of another setting gets rows of its own in a profile."""
        shots = int(self.report.get("shots") or 0)
        refine = int(self.report.get("refine") or 0)
        parts = [f"{shots}-shot" if shots else "", f"refine {refine}" if refine else ""]
        return ", ".join(part for part in parts if part)

    def rows(self) -> list[GapRow]:
        """Compile, TA (parity), TA (strict) and graded TA per context, then compile and TA of
        the Hard subset, with bootstrap CIs; and the share of BLEU 90-100 samples that fail
        TA (no interval: a share of the samples that landed there), named with the BLEU that
        made the bucket."""
        rows: list[GapRow] = []
        released = self.report.get("rules") == Rules.T2.value
        for context, metrics in self.report["contexts"].items():
            hard = metrics.get("hard", {"records": 0})
            label = ", ".join(
                part for part in (context, self.prompting, "T2 rules" if released else "") if part
            )
            unit = "rows" if released else "records"  # the released rules count file rows
            n, hard_n = metrics.get(unit, metrics["records"]), hard.get(unit, hard["records"])
            for key, name in METRICS.items():
                rows.append(self._row(f"{name} [{label}]", metrics.get(key), n))
            for key, name in HARD_METRICS.items():
                rows.append(self._row(f"{name} [{label}]", hard.get(key), hard_n))
            bleu = metrics.get("bleu") or {}
            top = next((b for b in bleu.get("by_bucket", []) if b["bleu"] == TOP), None)
            if top is not None:  # the paper's contrast: high BLEU, still wrong
                wrong = {"estimate": top["wrong"], "low": None, "high": None}
                name = f"wrong at BLEU {TOP} ({bleu.get('metric', 'sacrebleu')} BLEU) [{label}]"
                rows.append(self._row(name, wrong, top["samples"]))
            rows += self._equivalence_rows(metrics.get("beq"), label)
        return rows

    def _equivalence_rows(self, beq: EquivalenceRates | None, label: str) -> list[GapRow]:
        """BEqL and BEq+ (a run with ``beq``) over the theorem answers with a verdict (no
        interval: shares of those samples)."""
        if not beq:
            return []
        return [
            self._row(f"{name} [{label}]", {"estimate": rate, "low": None, "high": None}, n)
            for rate, name, n in (
                (beq["beql"], "BEqL", beq["samples"]),
                (beq["beq_plus"], "BEq+", beq["samples"]),
            )
        ]

    def _row(self, metric: str, ci: dict[str, Any] | None, n: int) -> GapRow:
        return GapRow(
            model=self.report["model"],
            diagnostic=DIAGNOSTIC,
            metric=metric,
            value=None if ci is None else 100 * ci["estimate"],
            ci=None if ci is None or ci["low"] is None else (100 * ci["low"], 100 * ci["high"]),
            n=int(n),
            log=self.report["log"],
        )

    def outcomes(self) -> dict[str, dict[str, bool]]:
        """TA (parity) per record and context, for paired comparisons (first sample of each)."""
        out: dict[str, dict[str, bool]] = {}
        for s in self.samples:
            if s.outcome == SampleOutcome.SERVER_ERROR:
                continue
            out.setdefault(f"TA [{s.context}]", {}).setdefault(s.record, s.ta)
        return out


def verdict(summary: T2Summary, row: GapRow) -> str:
    """For the report's first table: in the run's first context (its headline's), the share
    of answers that compile and of those whose successors build with them (TA)."""
    context = next(iter(summary.contexts.values()), None)
    if context is None or context["compile"] is None or context["ta"] is None:
        return "nothing checked"
    compiled, built = context["compile"]["estimate"], context["ta"]["estimate"]
    return f"compiles {100 * compiled:.0f} %, successors build {100 * built:.0f} %"


def summarize_log(log: EvalLog, *, n_resamples: int = 2000, seed: int = 0) -> T2Summary:
    """The report of one run: metrics per context, skipped records, ground-truth failures."""
    samples = read_samples(log)
    meta = cast(RunMetadata, log.eval.metadata or {})
    skipped: dict[str, list[str]] = meta.get("skipped", {})
    rules = parse_rules(meta.get("rules", Rules.GAPSCOPE.value))
    fallback = meta.get("nl_fallback", [])
    report: dict[str, Any] = {
        "model": log.eval.model,
        "log": log.location,
        "rules": rules.value,
        "records": meta.get("records"),
        "evaluated_records": meta.get("evaluated_records"),
        "min_successors": None if rules is Rules.T2 else meta.get("min_successors"),
        "skipped": {reason: len(ids) for reason, ids in skipped.items()},
        "skipped_ids": skipped,
        "nl_file": meta.get("nl_file"),
        "nl_fallback": fallback,
        "shots": meta.get("shots", 0),
        "shot_pool": meta.get("shot_pool"),
        "refine": meta.get("refine", 0),
        "beq": meta.get("beq", False),
        "untested": _untested(samples, meta.get("untested")),
        "contexts": summarize(
            with_missing(samples, _planned(meta), meta.get("contexts", ()))
            if rules is Rules.T2
            else samples,
            order=meta.get("contexts", ()),
            rules=rules,
            n_resamples=n_resamples,
            seed=seed,
        ),
    }
    notes = [_rules_note(rules)]
    if report["untested"]["samples"]:
        notes.append(_untested_note(report["untested"]))
    if fallback:
        notes.append(_fallback_note(fallback, meta.get("nl_file")))
    if meta.get("ground_truth"):
        failed = Counter(
            s.record for s in samples if s.outcome == SampleOutcome.CHECKED and not s.ta
        )
        report["ground_truth_invalid"] = sorted(failed)
    return T2Summary(report, tuple(samples), tuple(notes))


def _planned(meta: RunMetadata) -> list[ScoredSample]:
    """The run's planned records as failing samples (their context is set per context)."""
    return [
        ScoredSample(
            record=p["id"],
            context="",
            outcome=SampleOutcome.MISSING,
            compiles=False,
            ta=False,
            ta_strict=False,
            graded=None,
            successors=p["successors"],
            hard=p["hard"],
            rows=p["rows"],
        )
        for p in meta.get("planned", [])
    ]


def _untested(samples: list[ScoredSample], path: str | None) -> dict[str, Any]:
    """The samples Lean checked on a path that passed no self-test here (``selftest`` false
    in their score metadata), of those it checked, and the untested path the run allowed."""
    labelled = [s for s in samples if s.selftest is not None]
    return {
        "path": path,
        "samples": sum(not s.selftest for s in labelled),
        "checked": len(labelled),
    }


def _untested_note(untested: dict[str, Any]) -> str:
    where = UNTESTED_PATHS.get(untested["path"], "a local workspace whose self-test has not passed")
    return (
        f"UNTESTED (selftest=false): {untested['samples']} of {untested['checked']} checked"
        f" T2 samples were judged by {where}, a path no known-answer self-test certifies;"
        " its scores are not vouched for (docs/lean.md, the self-test)"
    )


def _rules_note(rules: Rules) -> str:
    if rules is Rules.T2:
        return (
            "T2 numbers made with --rules t2 (the released evaluator's counting: every row, "
            "the last duplicate wins, failures in the denominator, pass@k)"
        )
    return (
        "T2 numbers made with --rules gapscope (audited records, renamed answers and backend "
        "failures reported apart); --rules t2 reproduces the released evaluator's counting"
    )


def _fallback_note(ids: list[str], nl_file: str | None) -> str:
    where = f"not in {nl_file}" if nl_file else "no --nl file given"
    shown = ", ".join(ids[:3]) + (f" (+{len(ids) - 3} more)" if len(ids) > 3 else "")
    return (
        f"T2 NL for {len(ids)} record(s) came from their natural_language field ({where}): "
        f"{shown}. That is the source problem's text, not T2's informalized description of "
        "the target (its prompts used results/informalize; pass it with --nl)"
    )
