"""Terminal tables that belong to no one diagnostic, and the cell formats they all share.

The command modules (``gapscope.app``) only parse arguments; what a run or a report prints lives
in :mod:`gapscope.analysis`, so the same table serves ``run X`` and ``X report``. Each
diagnostic's tables sit beside its summary (``s2b_tables``, ``ladder_tables``, ``onng_tables``,
``prove_tables``, ``t2_tables``), a comparison's in :mod:`.compare`; here are the gap profile,
the study plan, the funnels, the quadrant test, the dosage curve, and the helpers those modules
format cells with (:func:`styled`, :func:`fmt`, :func:`percent`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from gapscope.analysis.literal import printable

if TYPE_CHECKING:
    from gapscope.analysis.profile import GapRow
    from gapscope.stats import QuadrantResult
    from gapscope.steer import CurvePoint, Trend


def styled(text: str, style: str) -> Text:
    """A styled cell or prefix: printed literally on any console (see ``analysis.literal``)."""
    return Text(printable(text), style=style)


def warning(prefix: str, note: str) -> Text:
    """A note under a table, behind a yellow ``prefix`` (both printed literally)."""
    return Text.assemble(styled(prefix, "yellow"), " ", printable(note))


def fmt(value: float | None, digits: int = 3) -> str:
    """A number to ``digits`` significant digits; ``-`` for an undefined one."""
    return "-" if value is None else f"{value:.{digits}g}"


def percent(value: float | None) -> str:
    """A share as a percentage with one decimal; ``n/a`` for an undefined one."""
    return "n/a" if value is None else f"{100 * value:.1f}%"


def rate_cell(rate: Mapping[str, Any]) -> str:
    """``hits/pairs (rate)`` of a containment rate as ``--json`` writes it (the HTML report)."""
    return f"{rate['hits']}/{rate['pairs']} ({percent(rate['rate'])})"


def print_rows(rows: Sequence[GapRow], console: Console, title: str = "Gap profile") -> None:
    """The gap-profile rows: one line per (model, diagnostic, metric)."""
    table = Table(title=title)
    for col in ("model", "diagnostic", "metric", "value [95% CI] (n)"):
        table.add_column(col, justify="right" if col.startswith("value") else "left")
    for row in rows:
        model = row.model if row.status == "success" else f"{row.model} (run {row.status})"
        table.add_row(model, row.diagnostic, row.metric, row.cell())
    console.print(table)


def print_dosage(points: Sequence[CurvePoint], trends: Sequence[Trend], console: Console) -> None:
    """A dosage curve's points (mean, CI, incoherent share) and each direction's trend."""
    table = Table(title="Dosage curve (mean ± sd over units, 95% bootstrap CI)")
    columns = ("direction", "alpha", "n", "mean ± sd", "95% CI", "vs baseline", "incoherent")
    for column in (*columns, "extra"):
        table.add_column(column, justify="left" if column == "direction" else "right")
    for p in points:
        drop = "" if p.relative_drop is None else f"{-100 * p.relative_drop:+.0f}%"
        table.add_row(
            p.direction + (" (not held out)" if p.overlaps_extraction else ""),
            f"{p.alpha:g}",
            str(p.n),
            f"{p.mean:.3g} ± {p.sd:.2g}",
            _interval(p.ci_low, p.ci_high, p.n),
            drop,
            f"{100 * p.incoherent:.1f}%",
            " ".join(f"{k} {v:.3g}" for k, v in p.extra.items()),
        )
    console.print(table)
    table = Table(title="Monotonicity (baseline included)")
    for column in ("direction", "Spearman rho", "slope", "slope 95% CI", "points", "dropped"):
        table.add_column(column, justify="left" if column == "direction" else "right")
    for t in trends:
        rho = "n/a (constant)" if t.rho is None else f"{t.rho:.3f}"
        table.add_row(
            t.direction,
            rho,
            "n/a (one alpha)" if t.slope is None else f"{t.slope:.3g}",
            _interval(t.slope_low, t.slope_high),
            str(t.points),
            f"{t.dropped}/{t.resamples}" if t.resamples else "",
        )
    console.print(table)


def _interval(low: float | None, high: float | None, n: int | None = None) -> str:
    """A CI as ``[low, high]``, or why there is none (fewer than two units: no spread)."""
    if low is None or high is None:
        return f"n/a (n = {n}, no CI)" if n is not None and n < 2 else "n/a"
    return f"[{low:.3g}, {high:.3g}]"


def print_funnel(title: str, counts: Mapping[str, int], console: Console) -> None:
    """A stage -> families count table (teacher compilation, the anchor screen)."""
    table = Table(title=title)
    table.add_column("stage")
    table.add_column("families", justify="right")
    for stage, n in counts.items():
        table.add_row(stage, str(n))
    console.print(table)


def print_quadrant(result: QuadrantResult, x_col: str, y_col: str, console: Console) -> None:
    """The 2 x 2 median-split table, the forbidden cell and both p-values."""
    # Column names are user data: the console (a LiteralConsole) prints them as they are.
    table = Table(title=f"Quadrant test: {y_col} vs {x_col} (median split)")
    table.add_column("")
    table.add_column(f"low {x_col} (<= {result.x_median:g})", justify="right")
    table.add_column(f"high {x_col} (> {result.x_median:g})", justify="right")
    table.add_row(
        f"high {y_col} (> {result.y_median:g})",
        f"{result.low_x_high_y} (forbidden)",
        str(result.high_x_high_y),
    )
    table.add_row(
        f"low {y_col} (<= {result.y_median:g})",
        str(result.low_x_low_y),
        str(result.high_x_low_y),
    )
    console.print(table)
    console.print(f"n = {result.n} models; forbidden cell (high Y, low X) = {result.forbidden}")
    if result.forbidden_labels:
        console.print("forbidden-cell models: " + ", ".join(result.forbidden_labels), markup=False)
    console.print(
        f"p (exact, {result.p_method} over {result.n_placements} placements) = {result.p_exact:.6g}"
    )
    console.print(f"p (hypergeometric cross-check) = {result.p_hypergeom:.6g}")


PLAN_COLUMNS = (
    ("model", "model"),
    ("diagnostic", "diagnostic"),
    ("task", "label"),
    ("samples", "samples"),
    ("generations", "generations"),
    ("max tokens", "max_tokens"),
    ("token budget", "token_budget"),
    ("Lean checks", "lean_checks"),
)
"""A study plan's columns (``gapscope profile``): heading and the plan row's key."""
PLAN_TEXT = frozenset({"model", "diagnostic", "label"})


def skip_lines(plan: Mapping[str, Any]) -> list[str]:
    """What a plan skips, one line per reason (``T2, O-NNG (m1, m2): needs a Lean
    backend ...``): a reason shared by several diagnostics and models is said once."""
    by_reason: dict[str, tuple[list[str], list[str]]] = {}
    for skipped in plan["skipped"]:
        diagnostics, models = by_reason.setdefault(skipped["reason"], ([], []))
        for value, seen in ((skipped["diagnostic"], diagnostics), (skipped["model"], models)):
            if value not in seen:
                seen.append(value)
    return [
        f"{', '.join(diagnostics)} ({', '.join(models)}): {reason}"
        for reason, (diagnostics, models) in by_reason.items()
    ]


def print_plan(plan: dict[str, Any], console: Console) -> None:
    """The plan as a table, then what is skipped (once per diagnostic and reason) and why."""
    table = Table(title="Plan")
    for column, key in PLAN_COLUMNS:
        table.add_column(column, justify="left" if key in PLAN_TEXT else "right")
    totals = plan["totals"]
    rows = [
        *plan["tasks"],
        {"model": "total", "diagnostic": "", "label": f"{totals['tasks']} tasks"} | totals,
    ]
    for row in rows:
        table.add_row(
            *(
                str(row[key]) if key in PLAN_TEXT else f"{row[key]:,}" if key in row else ""
                for _, key in PLAN_COLUMNS
            )
        )
    console.print(table)
    if plan.get("first_look"):  # profile --limit / --max-tokens
        said = {"limit": "samples per task", "max_tokens": "tokens per reply"}
        caps = [f"{said[key]} at most {value:,}" for key, value in plan["first_look"].items()]
        console.print(f"first look: {', '.join(caps)}", markup=False, highlight=False)
    for line in skip_lines(plan):
        console.print(f"skipped: {line}", markup=False, highlight=False, soft_wrap=True)
    for line in plan.get("time", {}).get("lines", []):  # the estimated wall time per model
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    for line in plan.get("context", {}).get("lines", []):  # prompts against context windows
        console.print(line, markup=False, highlight=False, soft_wrap=True)
