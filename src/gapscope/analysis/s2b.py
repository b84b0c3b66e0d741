"""Summarise an S2B-LM Inspect log: per-seed scores and mean +- sd over seeds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from inspect_ai.log import EvalLog

from gapscope.s2b.metrics import SeedSummary
from gapscope.s2b.task import SCORE_KEYS


@dataclass(frozen=True)
class S2BRunSummary:
    """What a user reads after a run: settings, one row per seed, and the seed aggregate."""

    preset: str
    listener: str
    model: str
    log_location: str
    status: str
    per_seed: list[dict[str, Any]]
    summary: dict[str, SeedSummary]

    def to_dict(self) -> dict[str, Any]:
        return {
            "preset": self.preset,
            "listener": self.listener,
            "model": self.model,
            "log": self.log_location,
            "status": self.status,
            "per_seed": self.per_seed,
            "summary": {
                key: {"mean": s.mean, "sd": s.sd, "n": s.n} for key, s in self.summary.items()
            },
        }


def summarize(log: EvalLog) -> S2BRunSummary:
    """Per-seed values from each sample's score; failed samples are listed with their error."""
    rows: list[dict[str, Any]] = []
    for sample in log.samples or []:
        row: dict[str, Any] = {"seed": sample.metadata.get("seed")}
        score = (sample.scores or {}).get("zsct_scorer")
        if score is not None and isinstance(score.value, dict):
            row.update({key: score.value[key] for key in SCORE_KEYS})
        else:
            row["error"] = sample.error.message if sample.error else "not scored"
        rows.append(row)
    scored = [r for r in rows if "error" not in r]
    summary = (
        {key: SeedSummary.of([r[key] for r in scored]) for key in SCORE_KEYS} if scored else {}
    )
    if summary:  # headline adj-ZSCT is adj(mean ZSCT); per-seed rows keep their own values
        summary["adj_zsct"] = summary["zsct"].adjusted()
        summary["adj_zsct_strict"] = summary["zsct_strict"].adjusted()
    task_args = log.eval.task_args
    return S2BRunSummary(
        preset=str(task_args.get("preset", "")),
        listener=str(task_args.get("listener", "")),
        model=log.eval.model,
        log_location=log.location,
        status=log.status,
        per_seed=rows,
        summary=summary,
    )
