"""``t2`` logs -> scored samples -> the per-context report (and the ground-truth invalid list).

The log is the only results format: each sample's score metadata holds its verdicts, the
task's metadata the records skipped before the run and why.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from inspect_ai.log import EvalLog

from gapscope.t2.evaluate import Outcome
from gapscope.t2.metrics import ScoredSample, summarize


def read_samples(log: EvalLog) -> list[ScoredSample]:
    """Every scored sample of a ``t2`` log; a sample that errored before scoring counts as
    ``server_error`` (nothing is known about it)."""
    if log.eval.task.split("/")[-1] != "t2":
        raise ValueError(f"{log.location} is a {log.eval.task!r} log, not a t2 log")
    out: list[ScoredSample] = []
    for sample in log.samples or []:
        score = next(iter((sample.scores or {}).values()), None)
        meta: dict[str, Any] = dict(score.metadata or {}) if score is not None else {}
        out.append(
            ScoredSample(
                record=str(meta.get("record", sample.metadata.get("id"))),
                context=str(meta.get("context", sample.metadata.get("context"))),
                outcome=str(meta.get("outcome", Outcome.SERVER_ERROR)),
                compiles=bool(meta.get("compiles", False)),
                ta=bool(meta.get("ta", False)),
                ta_strict=bool(meta.get("ta_strict", False)),
                graded=meta.get("graded"),
                successors=int(meta.get("successors", sample.metadata.get("successors", 0))),
            )
        )
    return out


def summarize_log(log: EvalLog, *, n_resamples: int = 2000, seed: int = 0) -> dict[str, Any]:
    """The report of one run: metrics per context, skipped records, ground-truth failures."""
    samples = read_samples(log)
    meta = log.eval.metadata or {}
    skipped: dict[str, list[str]] = meta.get("skipped", {})
    summary: dict[str, Any] = {
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
        failed = Counter(s.record for s in samples if s.outcome == Outcome.CHECKED and not s.ta)
        summary["ground_truth_invalid"] = sorted(failed)
    return summary
