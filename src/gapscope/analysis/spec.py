"""What gapscope knows of a diagnostic: one :class:`DiagnosticSpec` each, in one table.

A spec is plain data and callables: the Inspect tasks a profile builds (and at what budget),
the readers that turn each task's log into a typed summary and a view, the figures and report
sections drawn from those summaries, whether it needs Lean or a data file, and its docs page.
The built-in table is :mod:`gapscope.analysis.table`; another package adds a spec through the
``gapscope.diagnostics`` entry point (docs/extending.md). This module names no diagnostic, so
the table, the figures and the readers can all import it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from gapscope.analysis.logs import RunInfo
from gapscope.analysis.profile import GapRow
from gapscope.analysis.view import View, ViewOptions

if TYPE_CHECKING:
    from inspect_ai import Task
    from inspect_ai.log import EvalLog
    from matplotlib.figure import Figure

LEAN_HINT = (
    "needs a Lean backend: --lean local:DIR (make one with `gapscope lean setup DIR`; "
    "`gapscope lean doctor` says what is missing) or --lean kimina:URL"
)


class Summary(Protocol):
    """What every diagnostic's per-log summary offers."""

    def rows(self) -> list[GapRow]: ...

    def outcomes(self) -> dict[str, dict[str, bool]]: ...


@dataclass(frozen=True)
class LogReader:
    """How the logs of one Inspect task are read: the task's name, the diagnostic's display
    name, the summary reader and what ``run X`` shows of a summary."""

    task: str
    name: str
    summarize: Callable[[EvalLog], Summary]
    view: Callable[[Any, ViewOptions], View]
    """What ``run X`` shows of one summary (rows, ``--json`` details, the terminal printer)."""
    unit: str = "samples"
    """What one sample of the task is, in notes: ``16 rollouts cancelled, not scored``."""


@dataclass(frozen=True)
class LoadedLog:
    """One log, its reader, its summary and (when read from a file) its run's settings."""

    path: Path
    diagnostic: LogReader
    summary: Summary
    info: RunInfo | None = None

    def rows(self) -> list[GapRow]:
        """The summary's rows, each marked with the run's status; none when the model
        answered no sample (a rate over nothing is no rate)."""
        if self.info is not None and self.info.unanswered.count and not self.info.answered:
            return []
        return self.marked(self.summary.rows())

    def marked(self, rows: Iterable[GapRow]) -> list[GapRow]:
        """``rows`` of this log, each marked with the run's status and (unless its reader
        counted them in its own units) the samples the model never answered."""
        if self.info is None:
            return list(rows)
        unanswered = self.info.unanswered.text(self.diagnostic.unit)
        return [
            replace(row, status=self.info.status, unanswered=row.unanswered or unanswered)
            for row in rows
        ]

    def notes(self) -> list[str]:
        """What a table of this log must say: a run that did not finish, the samples the
        model never answered."""
        if self.info is None:
            return []
        notes = (self.info.note(), self.info.unanswered_note(self.diagnostic.unit))
        return [note for note in notes if note]


def summaries_of(logs: Iterable[LoadedLog], task: str) -> list[Any]:
    """The summaries of the logs of one task (its reader's type: the caller names it)."""
    return [x.summary for x in logs if x.diagnostic.task == task]


@dataclass(frozen=True)
class NamedFigure:
    """A figure and its file stem (``<stem>.png`` / ``<stem>.svg``) and caption."""

    stem: str
    caption: str
    figure: Figure


@dataclass(frozen=True)
class Inputs:
    """What a study runs on beyond the models: the Lean backend and the data files given,
    by the name a spec's :attr:`DiagnosticSpec.data` asks for (``families``, ``minif2f``)."""

    lean: str | None = None
    data: Mapping[str, str] = field(default_factory=dict)
    allow_unsandboxed: bool = False


Builder = tuple[str, "Callable[[], Task]"]
"""One task of a plan: its label in the plan and how to build it (built before anything runs)."""
Plan = Callable[[Mapping[str, Any], Inputs, str], list[Builder]]
"""A spec's tasks for one model (``"none"``: its reference players) at one budget's arguments."""
FigureMaker = Callable[[Sequence[LoadedLog]], "NamedFigure | None"]
"""A report figure over the unsteered logs, or None when its logs are absent."""
Section = Callable[[Sequence[LoadedLog], list[str]], str]
"""A report section (HTML with its own heading, "" when it has nothing), adding to the notes."""
Matrix = dict[str, dict[str, int]]
"""Counts of items by (outcome on side A, outcome on side B)."""
Transitions = Callable[[Sequence[LoadedLog], Sequence[LoadedLog]], dict[str, Matrix]]
"""``compare``'s outcome matrices of side A against side B, by name (none: an empty dict)."""


class SpecError(ValueError):
    """A diagnostic name or budget that no spec answers to; the message lists the known ones."""


@dataclass(frozen=True)
class DiagnosticSpec:
    """One diagnostic, as every command knows it.

    ``budgets`` maps a profile budget (``paper``, ``quick``; the built-ins add ``demo``, what
    ``make demo`` runs) to the task arguments ``plan``
    receives; ``data`` maps an :class:`Inputs` data name to the reason given when it is
    absent; ``references`` plans the tasks once more, per study, for model ``"none"`` (the
    reference players that give the models a scale).
    """

    name: str
    """Short name: ``profile --diagnostics``, plan rows, skip lines."""
    title: str
    readers: tuple[LogReader, ...]
    plan: Plan
    budgets: Mapping[str, Mapping[str, Any]]
    task_modules: tuple[str, ...] = ()
    """Modules whose ``@task`` functions gapscope's own Inspect entry point registers."""
    lean: bool = False
    """Every generation is checked by Lean: skipped without ``--lean``, counted in the plan."""
    data: Mapping[str, str] = field(default_factory=dict)
    references: bool = False
    figures: tuple[FigureMaker, ...] = ()
    sections: tuple[Section, ...] = ()
    transitions: Transitions | None = None
    docs: str = ""
    """Its documentation page (a path in gapscope's docs, or a URL)."""
    headline: str = ""
    """The metric (a prefix of its name) that heads this diagnostic in the report's first
    table; "": the first row its reader gives."""

    def tasks(self, budget: str, inputs: Inputs, model: str) -> tuple[list[Builder], str | None]:
        """The tasks of this diagnostic for ``model`` at ``budget``, or why it is skipped.

        Raises SpecError for a budget the spec does not define.
        """
        if budget not in self.budgets:
            raise SpecError(
                f"diagnostic {self.name} has no {budget!r} budget (it has: "
                f"{', '.join(self.budgets) or 'none'})"
            )
        if self.lean and inputs.lean is None:
            return [], LEAN_HINT
        missing = [reason for key, reason in self.data.items() if key not in inputs.data]
        if missing:
            return [], missing[0]
        return self.plan(self.budgets[budget], inputs, model), None
