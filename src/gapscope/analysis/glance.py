"""The report's first table (and ``profile``'s first printed one): one row per model, one
headline number per diagnostic, with what changes how to read it on the cell.

A researcher opens a report to learn where a model breaks; the full gap profile has a column
per metric (OracleLadder alone has ten) and scrolls sideways. Here each diagnostic gives one
row: the one its spec names as :attr:`~gapscope.analysis.spec.DiagnosticSpec.headline` (else
the first its reader gives), with its CI and n, the samples the model never answered and the
summary's own warnings (no ``\\boxed{}`` answer, degenerate answers). Every other metric stays
in the full table below.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

from rich.console import Console
from rich.table import Table

from gapscope.analysis.profile import GapRow

Cell = tuple[GapRow, list[str]]
"""A headline row and the warnings that stand on its cell."""


def headlines(
    rows: Sequence[GapRow],
    headline_of: Mapping[str, str],
    warnings: Mapping[tuple[str, str], Sequence[str]],
) -> dict[str, dict[str, Cell]]:
    """Per model (in ``rows``' order), per diagnostic: its headline row and the warnings on it.

    ``headline_of`` maps a diagnostic to the metric (a prefix: S2B's metrics name their
    preset) that heads it; a diagnostic not in it, or whose headline the model lacks, is
    headed by its first row. ``warnings`` are keyed by (model, diagnostic).
    """
    table: dict[str, dict[str, Cell]] = {}
    for row in rows:
        cells = table.setdefault(row.model, {})
        wanted = headline_of.get(row.diagnostic, "")
        kept = cells.get(row.diagnostic)
        if kept is None or (
            wanted and row.metric.startswith(wanted) and not kept[0].metric.startswith(wanted)
        ):
            cells[row.diagnostic] = (row, list(warnings.get((row.model, row.diagnostic), ())))
    return table


def _diagnostics(table: Mapping[str, Mapping[str, Cell]]) -> list[str]:
    return list(dict.fromkeys(d for cells in table.values() for d in cells))


def _value(row: GapRow) -> str:
    if row.value is None:
        return "n/a"
    text = f"{row.value:.1f}" if row.unit == "%" else f"{row.value:.3f}"
    return text + (f" [{row.ci[0]:.1f}, {row.ci[1]:.1f}]" if row.ci else "")


def glance_html(table: Mapping[str, Mapping[str, Cell]]) -> str:
    """The first table as HTML: a model per row, a diagnostic per column, each cell its
    headline metric, value [CI], n, and (in red) the unanswered samples and warnings."""
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
            row, notes = cells[d]
            warn = [row.unanswered_text().removeprefix(" · ")] if row.unanswered else []
            said = "".join(f'<span class="warn">{html.escape(w)}</span>' for w in warn + notes)
            tds.append(
                f'<td><span class="metric">{html.escape(row.metric)}</span>'
                f'<b>{_value(row)}</b> <span class="n">n={row.n}</span>{said}</td>'
            )
        body.append(f'<tr><th scope="row">{html.escape(model)}</th>{"".join(tds)}</tr>')
    return (
        "<h2>At a glance</h2><p>One headline per diagnostic: value [95% CI], n; in red what "
        "changes how to read it. Every metric is in the gap profile below.</p>"
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
            row, notes = cells[d]
            extra = [row.unanswered_text().removeprefix(" · ")] if row.unanswered else []
            texts.append("\n".join([row.metric, f"{_value(row)} (n={row.n})", *extra, *notes]))
        out.add_row(model, *texts)
    console.print(out)
