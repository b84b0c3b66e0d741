"""``gapscope report``: one self-contained HTML file (gap profile, figures, comparisons), with
every figure also written as PNG (300 dpi) and SVG beside it.

Self-contained means the page opens offline from a mail attachment: no CDN, no script
library, no stylesheet or image file referenced. Figures are embedded as ``data:`` URIs of
their SVG (each keeps its own id space, which inline ``<svg>`` elements would not); the one
inline script only marks a figure that failed to load, so a broken image is visible.
"""

from __future__ import annotations

import base64
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gapscope.analysis.compare import (
    Comparison,
    ComparisonError,
    NothingInCommon,
    compare_runs,
)
from gapscope.analysis.diagnostics import LoadedLog, LoadedLogs
from gapscope.analysis.figures import dosage_figures, save_figure
from gapscope.analysis.glance import Cell, glance_html, headlines
from gapscope.analysis.notes import Note, ranked
from gapscope.analysis.profile import GapRow
from gapscope.analysis.report_sections import escape, notes_list
from gapscope.analysis.spec import NamedFigure
from gapscope.analysis.steering import DosageCurve, dosage_curves, is_steering_run
from gapscope.analysis.table import specs, steering_target, verdict_of
from gapscope.analysis.terminal import PLAN_COLUMNS, skip_lines

MAX_PAIRS = 10  # comparisons drawn in a report; more models than 5 -> first ten pairs


@dataclass
class Report:
    """What was written: the HTML, each figure's files, the rows and comparisons shown."""

    html: Path
    figures: dict[str, list[Path]] = field(default_factory=dict)
    rows: list[GapRow] = field(default_factory=list)
    comparisons: list[Comparison] = field(default_factory=list)
    curves: list[DosageCurve] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    glance: dict[str, dict[str, Cell]] = field(default_factory=dict)
    """The first table: per model, per diagnostic, its headline row and warnings."""


def model_of(loaded: LoadedLog) -> str:
    """The model a log's results belong to (its first row's, else its run's): never the file
    name, which would make a log with nothing scored a model of its own."""
    rows = loaded.summary.rows()
    if rows:
        return rows[0].model
    return loaded.info.model if loaded.info is not None else loaded.path.stem


def _comparisons(logs: Sequence[LoadedLog], notes: list[str]) -> list[Comparison]:
    by_model: dict[str, list[LoadedLog]] = {}
    for loaded in logs:
        by_model.setdefault(model_of(loaded), []).append(loaded)
    done = []
    disjoint = 0
    for a, b in itertools.islice(itertools.combinations(by_model, 2), MAX_PAIRS):
        try:
            done.append(compare_runs(by_model[a], by_model[b], intersect=True))
        except NothingInCommon:  # a reference listener and a ladder-only model: no finding
            disjoint += 1
        except ComparisonError as exc:
            notes.append(f"{a} vs {b}: {exc}")
    if disjoint:
        notes.append(f"{disjoint} pairs of models share no diagnostic and are not compared")
    return done


REFERENCE_MODELS = ("none", "none/none")
"""Inspect's model of the reference players: ``--model none``, which a log records as
``none/none``."""


def under_test_first(logs: Sequence[LoadedLog]) -> list[LoadedLog]:
    """The logs of the models under test, then the reference players' (run as Inspect's
    ``none`` model): the rows a reader came for come first, the scale they are read on after."""
    return sorted(logs, key=lambda x: x.info is not None and x.info.model in REFERENCE_MODELS)


def _embed(figure: NamedFigure, directory: Path) -> tuple[list[Path], str]:
    """Write PNG and SVG; return the paths and the SVG as a data URI."""
    png, svg = save_figure(figure, directory)
    uri = "data:image/svg+xml;base64," + base64.b64encode(svg.read_bytes()).decode("ascii")
    return [png, svg], uri


def _unfinished(row: GapRow) -> str:
    return "" if row.status == "success" else f" · run {escape(row.status)}, not finished"


def _unanswered(row: GapRow) -> str:
    """What the model never answered behind a cell, on the cell: it changes how to read it."""
    text = row.unanswered_text().removeprefix(" · ")
    return f'<span class="unanswered">{escape(text)}</span>' if text else ""


def _profile_table(rows: Sequence[GapRow]) -> str:
    """One row per model, one column per (diagnostic, metric); each cell names its log."""
    models = list(dict.fromkeys(r.model for r in rows))
    columns = list(dict.fromkeys((r.diagnostic, r.metric) for r in rows))
    cells = {(r.model, r.diagnostic, r.metric): r for r in rows}
    diag_spans = itertools.groupby(columns, key=lambda c: c[0])
    head1 = "".join(f'<th colspan="{len(list(group))}">{escape(d)}</th>' for d, group in diag_spans)
    head2 = "".join(f"<th>{escape(m)}</th>" for _, m in columns)
    body = []
    for model in models:
        tds = []
        for d, m in columns:
            r = cells.get((model, d, m))
            if r is None:
                tds.append("<td></td>")
                continue
            if r.value is None:
                value = "n/a"
            else:  # percentages to one decimal, unit-free measures (topsim, ...) to three
                value = f"{r.value:.1f}" if r.unit == "%" else f"{r.value:.3f}"
            ci = f" [{r.ci[0]:.1f}, {r.ci[1]:.1f}]" if r.ci else ""
            tds.append(
                f'<td title="{escape(r.log)}">{value}<span class="ci">{ci}</span>'
                f'<span class="n">n={r.n} · {escape(Path(r.log).name)}{_unfinished(r)}</span>'
                f"{_unanswered(r)}</td>"
            )
        body.append(f'<tr><th scope="row">{escape(model)}</th>{"".join(tds)}</tr>')
    return (
        '<div class="scroll"><table class="profile">'
        f'<thead><tr><th rowspan="2">model</th>{head1}</tr><tr>{head2}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def _comparison_html(c: Comparison) -> str:
    rows = "".join(
        f"<tr><td>{escape(m.diagnostic)}</td><td>{escape(m.metric)}</td><td>{m.mcnemar.n}</td>"
        f"<td>{m.mcnemar.b}</td><td>{m.mcnemar.c}</td>"
        f"<td>{escape(m.difference.text())}</td>"
        f"<td>{m.mcnemar.p_value:.3g}</td><td>{m.p_holm:.3g}</td></tr>"
        for m in c.metrics
    )
    matrices = ""
    for name, matrix in c.transitions.items():
        cols = list(next(iter(matrix.values())))
        head = "".join(f"<th>{escape(col)}</th>" for col in cols)
        body = "".join(
            f"<tr><th>{escape(r)}</th>{''.join(f'<td>{row[col]}</td>' for col in cols)}</tr>"
            for r, row in matrix.items()
        )
        matrices += (
            f"<h4>OracleLadder transitions ({escape(name)}): A rows → B columns</h4>"
            f"<table><thead><tr><th></th>{head}</tr></thead><tbody>{body}</tbody></table>"
        )
    return (
        f"<h3>A = {escape(c.a)} vs B = {escape(c.b)}</h3>"
        "<table><thead><tr><th>diagnostic</th><th>metric</th><th>paired n</th><th>A only</th>"
        "<th>B only</th><th>A minus B, pp [95% CI]</th><th>McNemar p</th><th>Holm p</th></tr>"
        f"</thead><tbody>{rows}</tbody></table>{matrices}{notes_list(c.notes)}"
    )


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.2f}"


def _trend_html(curve: DosageCurve) -> str:
    """Per direction: Spearman rho (p) and the slope per unit alpha with its cluster CI (and
    how many resamples had no slope: all their units at one alpha)."""
    rows = "".join(
        f"<tr><td>{escape(t.direction)}</td>"
        f"<td>{'n/a' if t.rho is None else f'{t.rho:+.2f}'}</td>"
        f"<td>{'n/a' if t.rho_p is None else f'{t.rho_p:.3g}'}</td>"
        f"<td>{_number(t.slope)} [{_number(t.slope_low)}, {_number(t.slope_high)}]"
        + (f" ({t.dropped} of {t.resamples} resamples without a slope)" if t.dropped else "")
        + f"</td><td>{t.points}</td></tr>"
        for t in curve.trends
    )
    return (
        f"<h3>{escape(curve.title)}</h3><p>{escape(curve.settings_text)}</p>"
        "<table><thead><tr><th>direction</th><th>Spearman rho</th><th>p</th>"
        f"<th>slope per alpha [95% CI]</th><th>points</th></tr></thead><tbody>{rows}</tbody>"
        f"</table>{notes_list(curve.notes)}"
    )


STYLE = """
body{font-family:system-ui,sans-serif;margin:2rem;max-width:1200px;color:#222}
table{border-collapse:collapse;margin:.5rem 0 1.5rem;font-size:.85rem}
th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:right;vertical-align:top}
th[scope=row],thead th{text-align:left;background:#f4f4f4}
.ci{color:#555}.n{display:block;color:#888;font-size:.7rem}
.unanswered{display:block;color:#b00;font-size:.7rem}
.scroll{overflow-x:auto}
.profile th[scope=row],.profile thead tr:first-child th:first-child{position:sticky;left:0;
z-index:1}
figure{margin:1rem 0}figure img{max-width:100%;height:auto}
figure.broken::after{content:"figure failed to render";color:#b00}
.standing{padding:.5rem 1rem;margin:1rem 0;border-left:.4rem solid #2a7}
.standing.unfinished{border-color:#c00;background:#fee;font-weight:600}
figcaption{font-size:.85rem;color:#444}
.glance td{text-align:left;max-width:18rem}.glance b{font-size:1rem}
.glance .metric{display:block;color:#555;font-size:.75rem}
.glance .warn{display:block;color:#b00;font-size:.75rem}.glance td.none{color:#999}
.glance .verdict{display:block;font-size:.85rem;font-weight:600;color:#124}
"""
MARK_BROKEN = (
    "document.querySelectorAll('figure img').forEach(function(img){"
    "function check(){img.closest('figure').dataset.rendered="
    "(img.naturalWidth>0)?'yes':'no';if(!(img.naturalWidth>0))"
    "img.closest('figure').classList.add('broken');}"
    "if(img.complete){check();}else{img.addEventListener('load',check);"
    "img.addEventListener('error',check);}});"
)


def _standing_html(lines: Sequence[str], finished: bool) -> str:
    """The report's first lines: how the runs stand (all finished, or what did not)."""
    if not lines:
        return ""
    kind = "finished" if finished else "unfinished"
    items = "".join(f"<li>{escape(line)}</li>" for line in lines)
    return f'<div class="standing {kind}" id="standing"><ul>{items}</ul></div>'


def _plan_html(plan: Mapping[str, Any]) -> str:
    """A study's plan (``gapscope profile``): what each task was to spend, and what was left
    out and why."""
    rows = "".join(
        "<tr>" + "".join(f"<td>{escape(row[k])}</td>" for _, k in PLAN_COLUMNS) + "</tr>"
        for row in plan["tasks"]
    )
    skipped = skip_lines(plan)  # each reason once, as the terminal prints them
    return (
        "<h2>Plan</h2><table><thead><tr>"
        + "".join(f"<th>{escape(h)}</th>" for h, _ in PLAN_COLUMNS)
        + f"</tr></thead><tbody>{rows}</tbody></table>"
        + (f"<p>Skipped:</p>{notes_list(skipped)}" if skipped else "")
    )


def _figure_blocks(figures: Sequence[NamedFigure], out: Path, report: Report) -> str:
    """Every figure written beside ``out`` (PNG + SVG) and embedded, as HTML."""
    directory = out.parent / f"{out.stem}_figures"
    blocks = []
    for figure in figures:
        paths, uri = _embed(figure, directory)
        report.figures[figure.stem] = paths
        blocks.append(
            f'<figure id="fig-{escape(figure.stem)}"><img alt="{escape(figure.caption)}" '
            f'src="{uri}"><figcaption>{escape(figure.caption)} — also '
            f"{escape(paths[0].name)}, {escape(paths[1].name)} in {escape(directory.name)}/"
            "</figcaption></figure>"
        )
    return "".join(blocks)


def _warnings(summary: object) -> list[str]:
    """A summary's notes that change how its numbers are read (its ``warnings`` where it
    declares them, else all its notes): they stand on its first-table cell."""
    declared = getattr(summary, "warnings", None)
    return list(getattr(summary, "notes", ()) if declared is None else declared)


def _log_notes(plain: Sequence[LoadedLog], said: Sequence[str]) -> list[Note]:
    """Every note of the unsteered logs, with its model and diagnostic: each run's standing
    (not finished, samples never answered) and its summary's warnings change how its
    numbers are read; its summary's other notes do not. A summary's note that repeats the
    run's standing (``said``) is not said twice."""
    notes = []
    for x in plain:
        model, diagnostic, source = model_of(x), x.diagnostic.name, str(x.path)
        warnings = _warnings(x.summary)
        notes += [Note(n, model, diagnostic, True, source) for n in x.notes()]
        notes += [
            Note(f"{diagnostic}, {model}: {n}", model, diagnostic, n in warnings, source)
            for n in [*warnings, *getattr(x.summary, "notes", ())]
            if n not in said
        ]
    return notes


def _results(loaded_logs: LoadedLogs, out: Path) -> tuple[Report, list[LoadedLog], list[Note]]:
    """The report's rows, generic notes, comparisons and dosage curves, the unsteered logs
    and their own notes."""
    logs = loaded_logs.logs
    plain = under_test_first([loaded for loaded in logs if not is_steering_run(loaded)])
    own = _log_notes(plain, loaded_logs.notes)
    report = Report(
        html=out, notes=[n for n in loaded_logs.notes if n not in {x.text for x in own}]
    )
    report.rows = [row for loaded in plain for row in loaded.rows()]
    source = {row: loaded for loaded in plain for row in loaded.rows()}
    warnings: dict[tuple[str, str], list[str]] = {}
    for x in plain:  # a summary's warnings stand on its headline cell
        said = [n for n in _warnings(x.summary) if n not in loaded_logs.notes]
        warnings.setdefault((model_of(x), x.diagnostic.name), []).extend(said)
    report.glance = headlines(
        report.rows,
        {s.title: s.headline for s in specs()},
        warnings,
        lambda row: verdict_of(source[row], row),
    )
    report.comparisons = _comparisons(plain, report.notes)
    report.curves = dosage_curves(logs, report.notes, steering_target)
    steered = len(logs) - len(plain)
    if steered:
        report.notes.append(
            f"{steered} steering runs (steered, or a sweep's own alpha = 0 baseline) are drawn "
            "as dosage curves, not in the gap profile or the comparisons: they measure an "
            "intervention on a model, not the model"
        )
    return report, plain, own


def write_report(
    loaded_logs: LoadedLogs,
    out: Path,
    extra_figures: Sequence[NamedFigure] = (),
    plan: Mapping[str, Any] | None = None,
    status: Sequence[str] = (),
    finished: bool = True,
) -> Report:
    """Write ``out`` (HTML) and ``<out stem>_figures/`` (PNG + SVG of every figure); a study's
    ``plan`` (``gapscope profile``) goes at the top.

    The page opens with how the runs stand: ``status`` (a study's own account: what finished,
    what did not, what a rerun does; ``finished`` whether all did) or else one warning per
    log that did not finish, so an unfinished run is never read as a complete one. Each
    diagnostic's figures and sections come from its spec (:mod:`.table`).
    """
    logs = loaded_logs.logs
    unfinished = [  # each with what it left unanswered: "16 rollouts cancelled, not scored"
        note for x in logs if x.info is not None and not x.info.finished for note in x.notes()
    ]
    standing = list(status) or unfinished
    finished = finished and not unfinished
    report, plain, own = _results(loaded_logs, out)
    known = specs()
    figures = [f for s in known for make in s.figures if (f := make(plain)) is not None]
    figures += dosage_figures(report.curves) + list(extra_figures)
    blocks = _figure_blocks(figures, out, report)
    sections = "".join(section(plain, report.notes) for s in known for section in s.sections)
    steering = "".join(_trend_html(c) for c in report.curves)
    comparisons = "".join(_comparison_html(c) for c in report.comparisons)
    generic = [Note(n) for n in report.notes]  # the logs', comparisons' and sections' own
    report.notes = ranked([*own, *generic], list(report.glance))
    notes = "".join(f"<li>{escape(n)}</li>" for n in report.notes)
    sources = "".join(f"<li>{escape(loaded.path)}</li>" for loaded in logs)
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    page = (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        "<title>gapscope report</title>"
        f"<style>{STYLE}</style></head><body>"
        f"<h1>gapscope report</h1>{_standing_html(standing, finished)}"
        f"<p>{len(logs)} logs, generated {generated}.</p>"
        + glance_html(report.glance)
        + "<h2>Gap profile</h2>"
        "<p>Each cell: value (percent) [95% CI], n, and the log it came from (hover for the "
        "full path).</p>"
        f"{_profile_table(report.rows)}"
        + "<h2>Figures</h2>"
        + (blocks or "<p>No figure applies to these logs.</p>")
        + sections
        + (f"<h2>Steering</h2>{steering}" if steering else "")
        + (f"<h2>Comparisons</h2>{comparisons}" if comparisons else "")
        + (f"<h2>Notes</h2><ul>{notes}</ul>" if notes else "")
        + (_plan_html(plan) if plan is not None else "")
        + f"<h2>Logs</h2><ul>{sources}</ul>"
        f"<script>{MARK_BROKEN}</script></body></html>"
    )
    out.write_text(page, encoding="utf-8")
    return report
