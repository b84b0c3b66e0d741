"""The report's sections that belong to one diagnostic, and the HTML helpers every section
uses; a :class:`~gapscope.analysis.spec.DiagnosticSpec` names its sections, and the report
writes those of every diagnostic it knows (each returns "" when its logs are absent).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from gapscope.analysis.ladder import ModelRun, build_report
from gapscope.analysis.profile import GapRow
from gapscope.analysis.s2b import Axes, axes
from gapscope.analysis.spec import LoadedLog, summaries_of
from gapscope.analysis.t2 import T2Summary
from gapscope.analysis.t2_tables import t2_bleu_caption, t2_bleu_cells, t2_contexts
from gapscope.analysis.terminal import rate_cell
from gapscope.s2b import TASK as S2B_TASK


def escape(value: object) -> str:
    """``value`` as HTML text or attribute (quotes escaped too)."""
    return html.escape(str(value), quote=True)


def _axes_html(pairs: Sequence[Axes]) -> str:
    """Receptivity and constructivity side by side: one row per model and preset."""

    def cell(row: GapRow) -> str:
        ci = f" [{row.ci[0]:.1f}, {row.ci[1]:.1f}]" if row.ci else ""
        value = "n/a" if row.value is None else f"{row.value:.1f}"
        return f'<td title="{escape(row.log)}">{value}<span class="ci">{ci}</span></td>'

    body = "".join(
        f'<tr><th scope="row">{escape(p.model)}</th><td>{escape(p.preset)}</td>'
        f"{cell(p.receptivity)}{cell(p.constructivity)}"
        + "".join(f"<td>{p.language[k]:.3f}</td>" for k in ("topsim", "posdis", "bosdis"))
        + "</tr>"
        for p in pairs
    )
    return (
        "<h2>Receptivity and constructivity</h2>"
        "<p>S2B-LM with the model as listener (receptivity: it decodes the posdis speaker) and "
        "as speaker (constructivity: a rule listener decodes its messages), adj-ZSCT [95% "
        "Wilson CI]; the language measures are the speaker run's means over seeds (topsim: "
        "meaning Hamming vs message edit distance).</p>"
        "<table><thead><tr><th>model</th><th>preset</th><th>receptivity adj-ZSCT</th>"
        "<th>constructivity adj-ZSCT</th><th>topsim</th><th>posdis</th><th>bosdis</th></tr>"
        f"</thead><tbody>{body}</tbody></table>"
    )


def notes_list(notes: Sequence[str]) -> str:
    """A section's notes as a list (nothing when there are none)."""
    items = "".join(f"<li>{escape(n)}</li>" for n in notes)
    return f"<ul class='notes'>{items}</ul>" if items else ""


def html_table(head: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain HTML table, every cell escaped."""
    th = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def _ladder_html(logs: Sequence[LoadedLog], notes: list[str]) -> str:
    """OracleLadder's analyses over its logs (``ladder report``'s): matched help vs its
    controls, milestone answers in the model's own attempts, anchor-pair agreement."""
    runs = [  # a run with no family answered in full has its notes already, and no analysis
        loaded.summary
        for loaded in logs
        if isinstance(loaded.summary, ModelRun) and loaded.summary.tested
    ]
    if not runs:
        return ""
    try:
        details = build_report(runs).to_dict()
    except ValueError as exc:
        notes.append(f"OracleLadder analyses: {exc}")
        return ""
    models: dict[str, Any] = details["models"]
    parts = []
    tests = [
        (name, t["matched"], t["control"], t["families"], t["matched_only"], t["control_only"])
        + (f"{t['p_value']:.3g}", f"{t['p_holm']:.3g}")
        for name, m in models.items()
        for t in m["specificity_tests"]
    ]
    if tests:
        head = ("model", "matched", "control", "families", "matched only", "control only", "p")
        parts.append(
            "<h3>Matched help vs its control (exact McNemar on per-family outcomes)</h3>"
            + html_table((*head, "Holm p"), tests)
        )
    contained = [
        (name, subset, c["milestones"], rate_cell(c["own"]), rate_cell(c["control"]))
        for name, m in models.items()
        if m["containment"]
        for subset, c in m["containment"]["subsets"].items()
    ]
    if contained:
        matchers = sorted(
            {m["containment"].get("match", "token") for m in models.values() if m["containment"]}
        )
        parts.append(
            "<h3>Milestone answers in unaided (C1) attempts: own problem vs other problems "
            f"(match: {escape(', '.join(matchers))})</h3>"
            + html_table(
                ("model", "subset", "milestones", "own problem", "other problems"), contained
            )
        )
    anchors = details["kendall_tau_composition_gap_across_anchors"]
    if anchors is not None:
        pairs = [
            (
                p["a"],
                p["b"],
                ", ".join(p["compared"]),
                "undefined" if p["tau"] is None else f"{p['tau']:+.2f}",
            )
            for p in anchors["pairs"]
        ]
        mean = "undefined" if anchors["mean"] is None else f"{anchors['mean']:+.2f}"
        parts.append(
            f"<h3>Composition-gap ranking agreement between anchors (Kendall tau-b, rule "
            f"{escape(anchors['rule'])}; mean {escape(mean)})</h3>"
            + html_table(("anchor A", "anchor B", "models compared", "tau"), pairs)
        )
    return "".join(parts)


def _t2_html(logs: Sequence[LoadedLog]) -> str:
    """Each T2 run: the counting rules, compile/TA per context with the Hard subset's columns,
    and the BLEU contrast (TA per BLEU bucket of the answers)."""
    parts = []
    for loaded in logs:
        if not isinstance(loaded.summary, T2Summary):
            continue
        report = loaded.summary.to_dict()
        rules = report.get("rules", "gapscope")
        buckets = [
            (name, *t2_bleu_cells(b))
            for name, c in report["contexts"].items()
            for b in (c.get("bleu") or {"by_bucket": []})["by_bucket"]
        ]
        parts.append(
            f"<h3>{escape(report['model'])}: rules {escape(rules)}</h3>"
            f"<p>Counting rules: <b>{escape(rules)}</b> (docs/t2.md, Rules). "
            f"Log: {escape(loaded.path)}</p>" + html_table(*t2_contexts(loaded.summary))
        )
        if buckets:
            captions = "".join(
                f"<li>{escape(name)}: {escape(t2_bleu_caption(c['bleu']))}</li>"
                for name, c in report["contexts"].items()
                if (c.get("bleu") or {}).get("by_bucket")
            )
            parts.append(
                "<p>TA by BLEU of the answer against the ground truth</p>"
                f"<ul>{captions}</ul>"
                + html_table(("context", "BLEU", "samples", "TA %", "wrong %"), buckets)
            )
    return "".join(parts)


def s2b_axes_section(logs: Sequence[LoadedLog], notes: list[str]) -> str:
    """S2B-LM's receptivity and constructivity table, when the logs hold both seats."""
    pairs = axes(summaries_of(logs, S2B_TASK))
    return _axes_html(pairs) if pairs else ""


def ladder_section(logs: Sequence[LoadedLog], notes: list[str]) -> str:
    """OracleLadder's analyses under their heading (nothing without OracleLadder logs)."""
    body = _ladder_html(logs, notes)
    return f"<h2>OracleLadder</h2>{body}" if body else ""


def t2_section(logs: Sequence[LoadedLog], notes: list[str]) -> str:
    """Each T2 run's tables under their heading (nothing without T2 logs)."""
    body = _t2_html(logs)
    return f"<h2>T2</h2>{body}" if body else ""
