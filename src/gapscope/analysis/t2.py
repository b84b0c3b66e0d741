"""``t2`` logs -> scored samples -> the per-context report (and the ground-truth invalid list).

The log is the only results format: each sample's score metadata holds its verdicts, the
task's metadata the records skipped before the run and why. The metrics themselves (bootstrap
CIs over records, denominators) are :mod:`gapscope.t2.metrics`; this module only reads.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from gapscope.analysis.logs import counted_samples, malformed_sample, require_task, sample_score
from gapscope.analysis.profile import GapRow
from gapscope.t2.contract import TASK, RunMetadata, SampleScoreMetadata
from gapscope.t2.evaluate import SampleOutcome
from gapscope.t2.metrics import ScoredSample, summarize

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


def read_samples(log: EvalLog) -> list[ScoredSample]:
    """Every scored sample of a ``t2`` log; a sample that errored before scoring counts as
    ``server_error`` (nothing is known about it)."""
    require_task(log, TASK)
    out: list[ScoredSample] = []
    for sample in counted_samples(log):
        with malformed_sample(log, sample):
            score = sample_score(sample)
            meta = cast(
                SampleScoreMetadata, dict(score.metadata or {}) if score is not None else {}
            )
            out.append(
                ScoredSample(
                    record=str(meta.get("record", sample.metadata.get("id"))),
                    context=str(meta.get("context", sample.metadata.get("context"))),
                    outcome=str(meta.get("outcome", SampleOutcome.SERVER_ERROR)),
                    compiles=bool(meta.get("compiles", False)),
                    ta=bool(meta.get("ta", False)),
                    ta_strict=bool(meta.get("ta_strict", False)),
                    graded=meta.get("graded"),
                    successors=int(meta.get("successors", sample.metadata.get("successors", 0))),
                )
            )
    return out


@dataclass(frozen=True)
class T2Summary:
    """One T2 run: the report dict (``to_dict``), its gap-profile rows and per-item outcomes."""

    report: dict[str, Any]
    samples: tuple[ScoredSample, ...]

    def to_dict(self) -> dict[str, Any]:
        return self.report

    def rows(self) -> list[GapRow]:
        """Compile, TA (parity), TA (strict) and graded TA per context, with bootstrap CIs."""
        rows: list[GapRow] = []
        for context, metrics in self.report["contexts"].items():
            for key, name in METRICS.items():
                ci = metrics.get(key)
                rows.append(
                    GapRow(
                        model=self.report["model"],
                        diagnostic=DIAGNOSTIC,
                        metric=f"{name} [{context}]",
                        value=None if ci is None else 100 * ci["estimate"],
                        ci=None
                        if ci is None or ci["low"] is None
                        else (100 * ci["low"], 100 * ci["high"]),
                        n=int(metrics["records"]),
                        log=self.report["log"],
                    )
                )
        return rows

    def outcomes(self) -> dict[str, dict[str, bool]]:
        """TA (parity) per record and context, for paired comparisons (first sample of each)."""
        out: dict[str, dict[str, bool]] = {}
        for s in self.samples:
            if s.outcome == SampleOutcome.SERVER_ERROR:
                continue
            out.setdefault(f"TA [{s.context}]", {}).setdefault(s.record, s.ta)
        return out


def summarize_log(log: EvalLog, *, n_resamples: int = 2000, seed: int = 0) -> T2Summary:
    """The report of one run: metrics per context, skipped records, ground-truth failures."""
    samples = read_samples(log)
    meta = cast(RunMetadata, log.eval.metadata or {})
    skipped: dict[str, list[str]] = meta.get("skipped", {})
    report: dict[str, Any] = {
        "model": log.eval.model,
        "log": log.location,
        "records": meta.get("records"),
        "evaluated_records": meta.get("evaluated_records"),
        "skipped": {reason: len(ids) for reason, ids in skipped.items()},
        "skipped_ids": skipped,
        "contexts": summarize(
            samples, order=meta.get("contexts", ()), n_resamples=n_resamples, seed=seed
        ),
    }
    if meta.get("ground_truth"):
        failed = Counter(
            s.record for s in samples if s.outcome == SampleOutcome.CHECKED and not s.ta
        )
        report["ground_truth_invalid"] = sorted(failed)
    return T2Summary(report, tuple(samples))
