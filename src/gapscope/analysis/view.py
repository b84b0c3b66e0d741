"""What a command shows of a result: gap-profile rows, ``--json`` details and a terminal printer.

Every ``run X`` and ``X report`` hands its summary to one of the ``*_view`` functions here (through
:func:`gapscope.analysis.diagnostics.present` for a finished log), so a run and a report of the
same log print the same tables and emit the same envelope.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.console import Console

if TYPE_CHECKING:
    from gapscope.analysis.ladder import ModelRun
    from gapscope.analysis.onng import ONNGSummary
    from gapscope.analysis.profile import GapRow
    from gapscope.analysis.prove import ProveSummary
    from gapscope.analysis.s2b import S2BRunSummary
    from gapscope.analysis.t2 import T2Summary


@dataclass(frozen=True)
class View:
    """Gap-profile rows, JSON details, how to print them, and what the reader must know about
    them (``notes``: e.g. a run that did not finish; printed under the tables, in the
    envelope's ``notes``)."""

    rows: Sequence[GapRow] = ()
    details: Any = None
    show: Callable[[Console], None] | None = None
    notes: Sequence[str] = ()


@dataclass(frozen=True)
class ViewOptions:
    """The few display choices a command passes to a view (defaults: the papers')."""

    tau: int = 1
    n_resamples: int | None = None
    """None: the bootstrap scheme's own count."""
    per_problem: bool = False
    anchor_rule: str = "others"
    """An :class:`~gapscope.ladder.anchors.AnchorRule` value; a string so that this module
    (imported by every command) loads no diagnostic."""
    match: str = "paper"
    """A :class:`~gapscope.ladder.containment.Match` value (containment's matcher)."""
    ties: str = "tau-b"
    """A :class:`~gapscope.ladder.anchors.TieRule` value (the anchor Kendall's tie rule)."""
    bootstrap: str = "gapscope"
    """A :class:`~gapscope.stats.BootstrapScheme` value."""


def s2b_view(summary: S2BRunSummary, options: ViewOptions = ViewOptions()) -> View:
    from gapscope.analysis.s2b_tables import print_s2b

    return View(summary.rows(), summary.to_dict(), lambda console: print_s2b(summary, console))


def ladder_view(runs: Sequence[ModelRun], options: ViewOptions = ViewOptions()) -> View:
    from gapscope.analysis.ladder import build_report
    from gapscope.analysis.ladder_tables import print_ladder
    from gapscope.ladder import AnchorRule, Match, TieRule
    from gapscope.stats import BootstrapScheme

    report = build_report(
        list(runs),
        tau=options.tau,
        n_resamples=options.n_resamples,
        anchor_rule=AnchorRule(options.anchor_rule),
        match=Match(options.match),
        ties=TieRule(options.ties),
        bootstrap=BootstrapScheme(options.bootstrap),
    )
    return View(
        [row for run in runs for row in run.rows(options.tau)],
        report.to_dict(),
        lambda console: print_ladder(report, console),
        [note for run in runs for note in run.notes],
    )


def onng_view(summary: ONNGSummary, options: ViewOptions = ViewOptions()) -> View:
    from gapscope.analysis.onng_tables import print_onng

    return View(summary.rows(), summary.to_dict(), lambda console: print_onng(summary, console))


def prove_view(summaries: Sequence[ProveSummary], options: ViewOptions = ViewOptions()) -> View:
    from gapscope.analysis.prove_tables import print_prove

    return View(
        [row for s in summaries for row in s.rows()],
        [s.to_dict() for s in summaries],
        lambda console: print_prove(summaries, console, options.per_problem),
    )


def t2_view(summary: T2Summary, options: ViewOptions = ViewOptions()) -> View:
    from gapscope.analysis.t2_tables import print_t2

    return View(
        summary.rows(),
        summary.to_dict(),
        lambda console: print_t2(summary, console),
        list(summary.notes),
    )
