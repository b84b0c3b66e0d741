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
from typing import TYPE_CHECKING, Any, Protocol, cast

from gapscope.analysis.logs import RunInfo
from gapscope.analysis.profile import GapRow
from gapscope.analysis.view import View, ViewOptions
from gapscope.steer import S2B_ALPHAS, S2B_CONTROLS

if TYPE_CHECKING:
    from inspect_ai import Task
    from inspect_ai.log import EvalLog
    from matplotlib.figure import Figure

    from gapscope.steer import DoseCondition, Extraction

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


SteeredTask = Callable[[Mapping[str, Any], "str | None", float], "Task"]
"""How a steered run is built: (task arguments, direction directory or None, alpha) -> Task."""
Condition = Callable[[str, float, Any], "DoseCondition"]
"""A steered run's summary as one dosage-curve point: (direction, alpha, summary) -> point."""
HeldOut = Callable[["Extraction", "LoadedLog"], set[int]]
"""The episode seeds a run evaluated that its direction was extracted from (empty: held out)."""


@dataclass(frozen=True)
class SteeringTarget:
    """How a diagnostic is steered (``gapscope run steer --diagnostic NAME``): the runs of its
    first reader's task with a direction added to the model's residual stream.

    The task must take ``steer`` (a direction directory) and ``alpha`` and generate under
    :func:`gapscope.models.steered_generate` (and record :func:`gapscope.models.check_options`
    in its metadata as ``steering``): that is what makes a run steered, and what the report
    reads back. ``build`` makes a steered run from the sweep's task arguments; left None it
    calls the task function (:meth:`DiagnosticSpec.task_function`) with them and ``steer`` and
    ``alpha``. ``alphas`` and ``controls`` are the grid a sweep runs when none is given.
    """

    metric: str
    """The dosage curve's metric, as its JSON and figure axis name it (``zsct``)."""
    condition: Condition
    label: str = ""
    """The metric in gap-profile rows of a sweep (``ZSCT [clb, alpha=-4]``; default: metric)."""
    unit: str = ""
    """The rows' unit (``%`` for a metric on the 0-100 scale)."""
    build: SteeredTask | None = None
    alphas: tuple[float, ...] = S2B_ALPHAS
    controls: tuple[str, ...] = S2B_CONTROLS
    plays_episodes: bool = False
    """Its task plays the S2B-LM episodes the direction is extracted from: a sweep passes it
    the episode settings (``preset``, ``seeds``, ``first_seed``, ``max_tokens``, ``--set``)."""
    needs: Mapping[str, str] = field(default_factory=dict)
    """Task arguments a sweep must be given: ``{argument: what it is}``, checked before the
    direction is extracted."""
    held_out: HeldOut | None = None
    """Which evaluated episodes the direction saw (S2B-LM); None: no run can overlap."""


BUDGETS: Mapping[str, str] = {
    "paper": "each paper's protocol",
    "quick": "a first look in minutes on a CPU",
    "demo": "what `make demo` runs; a spec without one runs its quick budget",
}
"""The profile budgets every command offers, and what each means. A spec defines ``paper``
and ``quick``; ``demo`` is optional (:data:`FALLBACK`)."""
FALLBACK = {"demo": "quick"}
"""The budget a spec runs when it lacks one of these."""


Verdict = Callable[[Any, GapRow], str]
"""A diagnostic's one-line verdict under its headline in the report's first table: (the
summary of the log the headline row came from, that row) -> ``composition gap on 6 of 26
families``; "" says nothing. It reads only what the summary computed, and claims nothing its
intervals do not support."""


def outcome_verdict(summary: Summary, row: GapRow) -> str:
    """The verdict of a diagnostic that declares none: how many of the headline metric's
    items passed, from the summary's own per-item ``outcomes()`` (what ``compare`` pairs);
    "" when the summary has no outcomes under that metric's name."""
    items = summary.outcomes().get(row.metric, {})
    if not items:
        return ""
    passed, n = sum(items.values()), len(items)
    if passed == n:
        return f"every item passed ({n})"
    return f"no item of {n} passed" if not passed else f"{passed} of {n} items passed"


class SpecError(ValueError):
    """A diagnostic name or budget that no spec answers to; the message lists the known ones."""


@dataclass(frozen=True)
class DiagnosticSpec:
    """One diagnostic, as every command knows it.

    ``budgets`` maps a profile budget (:data:`BUDGETS`: ``paper`` and ``quick``, and
    optionally ``demo``, what ``make demo`` runs, else its ``quick``) to the task arguments
    ``plan`` receives; ``data`` maps an :class:`Inputs` data name to the reason given when it is
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
    steering: SteeringTarget | None = None
    """How its runs are steered; None: ``run steer`` refuses it."""
    docs: str = ""
    """Its documentation page (a path in gapscope's docs, or a URL)."""
    headline: str = ""
    """The metric (a prefix of its name) that heads this diagnostic in the report's first
    table; "": the first row its reader gives."""
    verdict: Verdict | None = None
    """The one line under the headline, for its first reader's logs; None (and for its
    other readers' logs): :func:`outcome_verdict`."""

    def verdict_on(self, reader: LogReader, summary: Summary, row: GapRow) -> str:
        """The verdict on ``row``, a headline of ``summary``, read by ``reader`` (one of this
        spec's readers)."""
        declared = self.verdict if reader == self.readers[0] else None
        return (declared or outcome_verdict)(summary, row)

    def task_function(self) -> Callable[..., Task]:
        """The ``@task`` function of this diagnostic's first reader (what ``gapscope run NAME``
        builds with the user's task arguments), found among the functions of
        :attr:`task_modules` by its Inspect task name.

        The name is matched without Inspect's package prefix: an installed package's task
        registers as ``package/name`` while the spec's reader names the bare ``name``.
        Raises SpecError when no module holds it.
        """
        import importlib

        from inspect_ai.util import registry_info

        wanted = self.readers[0].task
        for module_name in self.task_modules:
            for value in vars(importlib.import_module(module_name)).values():
                try:
                    info = registry_info(value)
                except ValueError:
                    continue  # not an Inspect registry object
                if info.type == "task" and info.name.split("/")[-1] == wanted:
                    return cast("Callable[..., Task]", value)
        raise SpecError(
            f"diagnostic {self.name}: no @task named {wanted!r} in its task_modules "
            f"({', '.join(self.task_modules) or 'none declared'})"
        )

    def steered_task(self, args: Mapping[str, Any], steer: str | None, alpha: float) -> Task:
        """One run of this diagnostic's steering target: ``args`` and the direction at
        ``alpha`` (:attr:`SteeringTarget.build`, else the task function). Raises SpecError
        for a diagnostic that declares no target."""
        target = self.steering
        if target is None:
            raise SpecError(f"diagnostic {self.name} declares no steering target")
        if target.build is not None:
            return target.build(args, steer, alpha)
        return self.task_function()(**args, steer=steer, alpha=alpha)

    def tasks(self, budget: str, inputs: Inputs, model: str) -> tuple[list[Builder], str | None]:
        """The tasks of this diagnostic for ``model`` at ``budget``, or why it is skipped.

        Raises SpecError for a budget the spec does not define (``demo`` falls back to
        ``quick``).
        """
        budget = budget if budget in self.budgets else FALLBACK.get(budget, budget)
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
