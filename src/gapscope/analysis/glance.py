"""The report's first table (and ``profile``'s first printed one): one row per model, one
headline number per diagnostic, with what changes how to read it on the cell.

A researcher opens a report to learn where a model breaks; the full gap profile has a column
per metric (OracleLadder alone has ten) and scrolls sideways. Here each diagnostic gives one
row: the one its spec names as :attr:`~gapscope.analysis.spec.DiagnosticSpec.headline` (else
the first its reader gives), with its CI and n, a one-line verdict read from the summary
(:attr:`~gapscope.analysis.spec.DiagnosticSpec.verdict`: ``composition gap on 6 of 26
families``, ``at chance: every answer 'different'``), the samples the model never answered
and the summary's own warnings (no ``\\boxed{}`` answer, degenerate answers, games cut by the
context window). Every other metric stays in the full table below.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from gapscope.analysis.literal import printable
from gapscope.analysis.profile import GapRow


@dataclass(frozen=True)
class Cell:
    """One model's headline of one diagnostic, what it says in words and what stands on it."""

    row: GapRow
    warnings: tuple[str, ...] = ()
    """What changes how to read the number: the summary's warnings."""
    verdict: str = ""
    """The one line its diagnostic's verdict reads from the summary ("" says nothing)."""

    def said(self) -> list[str]:
        """Everything shown in red on the cell: the unanswered samples, then the warnings."""
        unanswered = self.row.unanswered_text().removeprefix(" · ")
        return ([unanswered] if unanswered else []) + list(self.warnings)

    def to_dict(self) -> dict[str, Any]:
        """The cell in ``--json`` (``details.glance``): its row, verdict and warnings."""
        return self.row.to_dict() | {"verdict": self.verdict or None, "warnings": self.said()}


def headlines(
    rows: Sequence[GapRow],
    headline_of: Mapping[str, str],
    warnings: Mapping[tuple[str, str], Sequence[str]],
    verdict_of: Callable[[GapRow], str] = lambda row: "",
) -> dict[str, dict[str, Cell]]:
    """Per model (in ``rows``' order), per diagnostic: its headline row, its verdict and the
    warnings on it.

    ``headline_of`` maps a diagnostic to the metric (a prefix: S2B's metrics name their
    preset) that heads it; a diagnostic not in it, or whose headline the model lacks, is
    headed by its first row. ``warnings`` are keyed by (model, diagnostic); ``verdict_of``
    says a chosen headline row in words.
    """
    table: dict[str, dict[str, Cell]] = {}
    for row in rows:
        cells = table.setdefault(row.model, {})
        wanted = headline_of.get(row.diagnostic, "")
        kept = cells.get(row.diagnostic)
        if kept is None or (
            wanted and row.metric.startswith(wanted) and not kept.row.metric.startswith(wanted)
        ):
            cells[row.diagnostic] = Cell(row, tuple(warnings.get((row.model, row.diagnostic), ())))
    return {
        model: {d: replace(cell, verdict=verdict_of(cell.row)) for d, cell in cells.items()}
        for model, cells in table.items()
    }


def glance_dict(table: Mapping[str, Mapping[str, Cell]]) -> dict[str, dict[str, Any]]:
    """The first table in ``--json``: per model, per diagnostic, the cell."""
    return {model: {d: c.to_dict() for d, c in cells.items()} for model, cells in table.items()}


def _diagnostics(table: Mapping[str, Mapping[str, Cell]]) -> list[str]:
    return list(dict.fromkeys(d for cells in table.values() for d in cells))


def _value(row: GapRow) -> str:
    if row.value is None:
        return "n/a"
    text = f"{row.value:.1f}" if row.unit == "%" else f"{row.value:.3f}"
    return text + (f" [{row.ci[0]:.1f}, {row.ci[1]:.1f}]" if row.ci else "")


def glance_html(table: Mapping[str, Mapping[str, Cell]]) -> str:
    """The first table as HTML: a model per row, a diagnostic per column, each cell its
    headline metric, value [CI], its verdict, n, and (in red) the unanswered samples and
    warnings."""
    if not table:
        return ""
    diagnostics = _diagnostics(table)
    head = "".join(f"<th>{html.escape(d)}</th>" for d in diagnostics)
    body = []
    for model, cells in table.items():
        tds = []
        for d in diagnostics:
            if d not in cells:
                tds.append('<td class="none">not run</td>')
                continue
            cell = cells[d]
            said = "".join(f'<span class="warn">{html.escape(w)}</span>' for w in cell.said())
            verdict = (
                f'<span class="verdict">{html.escape(cell.verdict)}</span>' if cell.verdict else ""
            )
            tds.append(
                f'<td><span class="metric">{html.escape(cell.row.metric)}</span>'
                f'<b>{_value(cell.row)}</b> <span class="n">n={cell.row.n}</span>'
                f"{verdict}{said}</td>"
            )
        body.append(f'<tr><th scope="row">{html.escape(model)}</th>{"".join(tds)}</tr>')
    return (
        "<h2>At a glance</h2><p>One headline per diagnostic: value [95% CI], n, what it says; "
        "in red what changes how to read it. Every metric is in the gap profile below.</p>"
        '<table class="glance" id="glance"><thead><tr><th>model</th>'
        f"{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def print_glance(table: Mapping[str, Mapping[str, Cell]], console: Console) -> None:
    """The same first table in a terminal."""
    if not table:
        return
    diagnostics = _diagnostics(table)
    out = Table(title="At a glance: one headline per diagnostic")
    out.add_column("model")
    for d in diagnostics:
        out.add_column(d)
    for model, cells in table.items():
        texts = []
        for d in diagnostics:
            if d not in cells:
                texts.append("not run")
                continue
            cell = cells[d]
            said = [cell.row.metric, f"{_value(cell.row)} (n={cell.row.n})", cell.verdict]
            texts.append("\n".join([line for line in said if line] + cell.said()))
        out.add_row(*(Text(printable(text)) for text in (model, *texts)))  # no markup, no escapes
    console.print(out)
