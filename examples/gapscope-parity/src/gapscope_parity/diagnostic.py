"""What gapscope knows of the parity task: the summary of a log, its view and the spec.

The entry point ``gapscope.diagnostics`` names :data:`SPEC`; gapscope's ``profile`` plans
the task from it, and ``report`` and ``compare`` read parity logs through its reader.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.console import Console

from gapscope.analysis.logs import counted_samples, sample_score
from gapscope.analysis.profile import GapRow
from gapscope.analysis.spec import Builder, DiagnosticSpec, Inputs, LogReader
from gapscope.analysis.view import View, ViewOptions
from gapscope_parity import TASK, parity

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog

TITLE = "parity"
"""The diagnostic's name in tables (the gap profile's column group)."""


@dataclass(frozen=True)
class ParitySummary:
    """One parity run: which numbers the model got right."""

    model: str
    log: str
    correct: dict[str, bool]

    def rows(self) -> list[GapRow]:
        """Accuracy with its Wilson interval (no row for a run that scored nothing)."""
        k, n = sum(self.correct.values()), len(self.correct)
        return [GapRow.share(self.model, TITLE, "accuracy", k, n, self.log)] if n else []

    def outcomes(self) -> dict[str, dict[str, bool]]:
        """Per number, right or wrong: what ``compare`` pairs across two models."""
        return {"accuracy": dict(self.correct)}


def summarize(log: EvalLog) -> ParitySummary:
    """Read a parity log (every counted sample; an unscored one counts as wrong)."""
    correct = {}
    for sample in counted_samples(log):
        score = sample_score(sample)
        correct[str(sample.id)] = score is not None and score.value == "C"
    return ParitySummary(log.eval.model, log.location, correct)


def view(summary: ParitySummary, options: ViewOptions = ViewOptions()) -> View:
    """The rows, the per-number outcomes as ``--json`` details, one line in the terminal."""

    def show(console: Console) -> None:
        for row in summary.rows():
            console.print(f"{row.model}: parity accuracy {row.cell()}", markup=False)

    return View(summary.rows(), {"model": summary.model, "correct": summary.correct}, show)


def plan(budget: Mapping[str, Any], inputs: Inputs, model: str) -> list[Builder]:
    """One task per model at the budget's arguments."""
    return [("numbers 1..{limit}".format(**budget), lambda: parity(**budget))]


SPEC = DiagnosticSpec(
    name="parity",
    title=TITLE,
    readers=(LogReader(TASK, TITLE, summarize, view),),
    plan=plan,
    budgets={"paper": {"limit": 100}, "quick": {"limit": 6}},
    task_modules=("gapscope_parity.task",),
    docs="examples/gapscope-parity/README.md",
)
