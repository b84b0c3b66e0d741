"""The stock reader of a simple diagnostic: the share of samples its scorer marked correct.

A diagnostic whose task scores each sample right or wrong (Inspect's ``CORRECT``) needs no
reader of its own: ``share_reader(TASK, "parity")`` reads its logs into a
:class:`ShareSummary` (every counted sample: an unscored one is wrong, as every gapscope
count is; :func:`gapscope.analysis.logs.counted_samples`), shows one line per run in the
terminal, puts the share with its Wilson interval in the gap profile and the per-sample
outcomes in ``compare``. :func:`share_condition` is the same read as a dosage-curve point,
so such a diagnostic can be a steering target (:class:`gapscope.analysis.spec.SteeringTarget`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gapscope.analysis.logs import counted_samples, sample_score
from gapscope.analysis.profile import GapRow
from gapscope.analysis.spec import LogReader
from gapscope.analysis.view import View, ViewOptions
from gapscope.steer import DoseCondition

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog
    from rich.console import Console

CORRECT = "C"
"""Inspect's ``CORRECT`` score value (``inspect_ai.scorer.CORRECT``), which every stock
scorer (``exact()``, ``match()``, ``includes()``, ``choice()``) gives a right answer."""


@dataclass(frozen=True)
class ShareSummary:
    """One run: which samples the scorer marked correct, by sample id."""

    title: str
    metric: str
    model: str
    log: str
    correct: dict[str, bool]

    def rows(self) -> list[GapRow]:
        """The share correct with its Wilson interval (no row for a run that scored nothing)."""
        k, n = sum(self.correct.values()), len(self.correct)
        return [GapRow.share(self.model, self.title, self.metric, k, n, self.log)] if n else []

    def outcomes(self) -> dict[str, dict[str, bool]]:
        """Per sample, right or wrong: what ``compare`` pairs across two models."""
        return {self.metric: dict(self.correct)}


def read_share(log: EvalLog, title: str, metric: str = "accuracy") -> ShareSummary:
    """A log's samples, each right (its score is ``CORRECT``) or wrong (any other score, or
    none)."""
    correct = {}
    for sample in counted_samples(log):
        score = sample_score(sample)
        correct[str(sample.id)] = score is not None and score.value == CORRECT
    return ShareSummary(title, metric, log.eval.model, log.location, correct)


def share_view(summary: ShareSummary, options: ViewOptions = ViewOptions()) -> View:
    """The row, the per-sample outcomes as ``--json`` details, one line in the terminal."""

    def show(console: Console) -> None:
        for row in summary.rows():
            console.print(f"{row.model}: {row.diagnostic} {row.metric} {row.cell()}", markup=False)

    details = {"model": summary.model, "metric": summary.metric, "correct": summary.correct}
    return View(summary.rows(), details, show)


def share_reader(task: str, title: str, metric: str = "accuracy") -> LogReader:
    """The reader of a right-or-wrong task's logs: its spec's ``readers=(share_reader(...),)``."""
    summarize = functools.partial(read_share, title=title, metric=metric)
    return LogReader(task, title, summarize, share_view)


def share_condition(direction: str, alpha: float, summary: ShareSummary) -> DoseCondition:
    """A steered run as a dosage-curve point: each sample a unit worth 1 (right) or 0 (wrong),
    so the point is the share correct and its interval resamples samples. A right-or-wrong
    scorer says nothing about coherence: ``incoherent`` is 0."""
    if not summary.correct:
        raise ValueError(f"{direction} alpha={alpha:g}: no sample was scored")
    values = {item: float(right) for item, right in summary.correct.items()}
    return DoseCondition(direction, alpha, values, incoherent=0.0)
