"""The tables of a T2 run (:class:`~gapscope.analysis.t2.T2Summary`) and of ``t2 audit``.

:func:`t2_contexts`, :func:`t2_bleu_cells` and :func:`t2_bleu_caption` make the cells both the
terminal and the HTML report (:mod:`.report`) show, so the two cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rich.table import Table

if TYPE_CHECKING:
    from rich.console import Console

    from gapscope.analysis.t2 import (
        BleuBucket,
        BleuContrast,
        ContextReport,
        HardSubset,
        Interval,
        T2Summary,
    )
    from gapscope.t2 import Audit

T2_OUTCOMES = {
    "renamed": "renamed",
    "no_answer": "no answer",
    "forbidden_command": "forbidden",
    "server_error": "server err",
    "broke_check": "broke check",
    "missing": "missing",
}
"""The outcomes counted per context, with their column names."""


def t2_pct(ci: Interval | None) -> str:
    """A share and its interval in percent: ``n/a`` when undefined, ``[n/a]`` for no interval."""
    if ci is None:
        return "n/a"
    if ci["low"] is None or ci["high"] is None:  # one record: an estimate without an interval
        return f"{100 * ci['estimate']:.1f} [n/a]"
    return f"{100 * ci['estimate']:.1f} [{100 * ci['low']:.1f}, {100 * ci['high']:.1f}]"


def _count(counts: ContextReport | HardSubset, unit: str) -> int:
    """A denominator in ``unit``: file rows (the released rules) or records."""
    return counts["rows"] if unit == "rows" else counts["records"]


def t2_contexts(summary: T2Summary) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """The per-context table of a T2 run (terminal and HTML report): its column names, and per
    context compile, TA, strict, graded, precision, the Hard subset and the outcome counts."""
    unit = summary.unit
    columns: tuple[str, ...] = (
        *("context", unit, "compile", "TA", "TA strict", "graded TA", "P(TA|compile)"),
        *(f"Hard {unit}", "Hard compile", "Hard TA", "Hard P(TA|compile)"),
        *T2_OUTCOMES.values(),
    )
    rows = []
    for name, c in summary.contexts.items():
        hard = c["hard"]
        rows.append(
            (name, str(_count(c, unit)))
            + (t2_pct(c["compile"]), t2_pct(c["ta"]), t2_pct(c["ta_strict"]), t2_pct(c["graded"]))
            + (t2_pct(c["compile_precision"]), str(_count(hard, unit)))
            + (t2_pct(hard["compile"]), t2_pct(hard["ta"]), t2_pct(hard["compile_precision"]))
            + tuple(str(c["outcomes"][o]) for o in T2_OUTCOMES)
        )
    return columns, rows


def t2_bleu_cells(row: BleuBucket) -> tuple[str, str, str, str]:
    """One BLEU bucket: its label, samples, TA % and wrong %."""
    return row["bleu"], str(row["samples"]), f"{100 * row['ta']:.1f}", f"{100 * row['wrong']:.1f}"


def t2_bleu_caption(bleu: BleuContrast) -> str:
    """Which BLEU made the buckets (its sacrebleu signature), its mean, and T2's own per-record
    BLEU-4 and exact match, the numbers its paper reports."""
    text = (
        f"buckets by the {bleu['metric']} BLEU ({bleu['signature']}): "
        f"mean {bleu['mean']:.1f} over {bleu['samples']} samples"
    )
    if bleu["t2_bleu4"] is not None and bleu["t2_exact_match"] is not None:
        text += (
            f"; T2's own per-record BLEU-4 {bleu['t2_bleu4']:.2f}, "
            f"exact match {100 * bleu['t2_exact_match']:.2f} %"
        )
    return text


def print_t2(summary: T2Summary, console: Console) -> None:
    """Compile vs TA vs strict vs graded per context, the Hard subset's compile and TA, TA by
    successors and by BLEU, what was skipped."""
    shown = "rows (the released evaluator's rules)" if summary.unit == "rows" else summary.unit
    setting = f" {summary.prompting}" if summary.prompting else ""
    table = Table(title=f"T2 {summary.model}{setting} (95% bootstrap CIs over {shown})")
    columns, rows = t2_contexts(summary)
    for col in columns:
        table.add_column(col, justify="left" if col == "context" else "right")
    for row in rows:
        table.add_row(*row)
    console.print(table)
    for name, c in summary.contexts.items():
        _print_by_successors(name, c, console)
        print_t2_bleu(name, c["bleu"], console)
        _print_refinement(name, c, console)
    _print_equivalence(summary, console)
    _print_run(summary, console)


def _print_equivalence(summary: T2Summary, console: Console) -> None:
    """The paper's contrast of metrics: compile, TA, BEqL and BEq+ per context, over the
    theorem answers that have a BEq verdict (a run with ``--beq``)."""
    compared = {name: c["beq"] for name, c in summary.contexts.items() if c.get("beq")}
    if not compared:
        return
    table = Table(title="compile vs TA vs BEq (theorem answers Lean checked)")
    for col in ("context", "samples", "compile", "TA", "BEqL", "BEq+"):
        table.add_column(col, justify="left" if col == "context" else "right")
    for name, rates in compared.items():
        if rates is None:
            continue
        table.add_row(
            name,
            str(rates["samples"]),
            *(f"{100 * rates[k]:.1f}" for k in ("compile", "ta", "beql", "beq_plus")),
        )
    console.print(table)


def _print_refinement(context: str, c: ContextReport, console: Console) -> None:
    """What compile feedback changed: the first answers' compile rate against the last's."""
    done = c.get("refinement")
    if not done:
        return
    console.print(
        f"{context}: compile feedback: first answers compile {100 * done['first_compile']:.1f} %,"
        f" last answers {100 * done['compile']:.1f} % of {done['samples']} samples;"
        f" {done['revised']} revised ({done['revisions']} revisions), {done['fixed']} of them"
        " compile now (TA before feedback: a run with --refine 0)"
    )


def _print_by_successors(context: str, c: ContextReport, console: Console) -> None:
    """TA and graded TA per number of successors (the paper: more successors, stricter)."""
    by = Table(title=f"{context}: TA by number of successors")
    for col in ("successors", "records", "samples", "TA", "graded TA"):
        by.add_column(col, justify="right")
    for row in c["ta_by_successors"]:
        by.add_row(
            str(row["successors"]),
            str(row["records"]),
            str(row["samples"]),
            f"{100 * row['ta']:.1f}",
            "n/a" if row["graded"] is None else f"{100 * row['graded']:.1f}",
        )
    console.print(by)


def _print_run(summary: T2Summary, console: Console) -> None:
    """The rules, the record funnel, the records whose own target fails, and the log."""
    skipped = ", ".join(f"{reason} {n}" for reason, n in summary.skipped.items() if n)
    console.print(
        f"rules: {summary.rules.value}; records: {summary.records}, "
        f"evaluated: {summary.evaluated_records}" + (f"; skipped: {skipped}" if skipped else "")
    )
    untested = summary.report.get("untested") or {}
    if untested.get("samples"):
        console.print(
            f"selftest=false: {untested['samples']} of {untested['checked']} checked samples"
            f" judged on an untested path ({untested.get('path') or 'local workspace'})"
        )
    invalid = summary.ground_truth_invalid
    if invalid is not None:
        console.print(f"ground truth fails on {len(invalid)} record(s): {', '.join(invalid)}")
    console.print(f"log: {summary.log}")


def print_t2_bleu(context: str, bleu: BleuContrast | None, console: Console) -> None:
    """TA per BLEU bucket: the paper's contrast (high BLEU, still semantically wrong)."""
    if not bleu or not bleu["by_bucket"]:
        return
    table = Table(title=f"{context}: TA by BLEU of the answer against the ground truth")
    for col in ("BLEU", "samples", "TA", "wrong"):
        table.add_column(col, justify="right")
    for row in bleu["by_bucket"]:
        table.add_row(*t2_bleu_cells(row))
    console.print(table)
    console.print(t2_bleu_caption(bleu))


def print_t2_audit(data: str, result: Audit, profile: Mapping[str, Any], console: Console) -> None:
    """Records per defect class (first five ids each) and the successor profile."""
    table = Table(title=f"T2 audit of {data}: {len(result.valid)} of {result.total} records valid")
    table.add_column("defect")
    table.add_column("records", justify="right")
    table.add_column("ids")
    ids = result.ids()
    for defect, count in result.counts().items():
        shown = ids.get(defect, [])
        more = f" (+{len(shown) - 5} more)" if len(shown) > 5 else ""
        table.add_row(defect, str(count), ", ".join(shown[:5]) + more)
    console.print(table)
    console.print(f"skipped by run t2: {result.skipped()} of {result.total} records")
    console.print("funnel: " + " -> ".join(f"{k} {v}" for k, v in result.funnel().items()))
    for key, value in profile.items():
        console.print(f"{key.replace('_', ' ')}: {value}")
