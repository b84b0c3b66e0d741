"""The report's figures, drawn with matplotlib: one function per figure, each returning a
``Figure`` (or None when its logs are absent); each diagnostic's spec lists its own
(``figures`` in :mod:`gapscope.analysis.table`), in the order the report draws them.

matplotlib because it writes vector SVG and high-resolution PNG from one drawing, offline,
with no browser or JavaScript runtime in the loop, and it is what paper figures are usually
made with; the SVG is inlined in the HTML, so the report references no file or network.
"""

from __future__ import annotations

import dataclasses
import io
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from gapscope.analysis.ladder import ModelRun
from gapscope.analysis.onng import ONNGSummary
from gapscope.analysis.prove import ProveSummary
from gapscope.analysis.s2b import S2BRunSummary, axes
from gapscope.analysis.spec import LoadedLog, NamedFigure, summaries_of
from gapscope.ladder import GAP_ORDER, OUTCOME_ORDER, profile
from gapscope.ladder import TASK as LADDER_TASK
from gapscope.onng import TASK as ONNG_TASK
from gapscope.prove import TASK as PROVE_TASK
from gapscope.s2b import TASK as S2B_TASK
from gapscope.steer import BASELINE

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from gapscope.analysis.steering import DosageCurve
    from gapscope.stats import QuadrantResult

WIDTH, HEIGHT = 6.4, 3.6  # inches: a single column of a two-column paper at 2x
PNG_DPI = 300


def save_figure(figure: NamedFigure, directory: Path) -> tuple[Path, Path]:
    """Write ``<stem>.png`` (300 dpi) and ``<stem>.svg`` into ``directory``; the same drawing
    gives the same bytes (no date or software stamp), so reruns do not churn the files."""
    import matplotlib

    matplotlib.rcParams["svg.hashsalt"] = "gapscope"
    directory.mkdir(parents=True, exist_ok=True)
    png, svg = directory / f"{figure.stem}.png", directory / f"{figure.stem}.svg"
    figure.figure.savefig(png, dpi=PNG_DPI, metadata={"Software": None})
    buffer = io.BytesIO()
    figure.figure.savefig(buffer, format="svg", metadata={"Date": None})
    svg.write_bytes(buffer.getvalue())
    return png, svg


def _figure(width: float = WIDTH, height: float = HEIGHT, ncols: int = 1) -> Figure:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    fig.subplots(1, ncols, squeeze=False)
    return fig


def _integer_ticks(ax: Axes) -> None:
    """Counts (families) get whole-number ticks."""
    from matplotlib.ticker import MaxNLocator

    ax.yaxis.set_major_locator(MaxNLocator(integer=True))


def zsct_per_preset(logs: Sequence[LoadedLog]) -> NamedFigure | None:
    """Grouped bars: ZSCT per preset and model with Wilson 95% intervals, chance at 50."""
    runs: list[S2BRunSummary] = summaries_of(logs, S2B_TASK)
    rows = [row for run in runs for row in run.rows() if row.metric.startswith("ZSCT")]
    if not rows:
        return None
    fig = _figure()
    ax = fig.axes[0]
    presets = list(dict.fromkeys(r.metric for r in rows))
    models = list(dict.fromkeys(r.model for r in rows))
    width = 0.8 / len(models)
    for m, model in enumerate(models):
        xs, ys, lo, hi = [], [], [], []
        for p, preset in enumerate(presets):
            for r in rows:
                if r.model == model and r.metric == preset and r.value is not None and r.ci:
                    xs.append(p + (m - (len(models) - 1) / 2) * width)
                    ys.append(r.value)
                    lo.append(max(0.0, r.value - r.ci[0]))  # no -1e-14 from rounding
                    hi.append(max(0.0, r.ci[1] - r.value))
        bars = ax.bar(xs, ys, width, yerr=[lo, hi], capsize=3, label=model)
        ns = [r.n for p in presets for r in rows if r.model == model and r.metric == p and r.ci]
        ax.bar_label(bars, [f"n={n}" for n in ns], fontsize="xx-small", padding=2)
    ax.axhline(50, color="grey", linestyle="--", linewidth=1, label="chance")
    ax.set_xticks(range(len(presets)), [p.removeprefix("ZSCT [").rstrip("]") for p in presets])
    ax.set_ylim(0, 115)  # room above 100 for the legend, inside the axes
    ax.set_yticks(range(0, 101, 25))
    ax.set_ylabel("ZSCT (%), n = query games")
    ax.legend(fontsize="x-small", loc="upper center", ncols=min(4, len(models) + 1))
    return NamedFigure("s2b_zsct", "S2B-LM ZSCT per preset (95% Wilson CI over query games)", fig)


def _reported_runs(logs: Sequence[LoadedLog]) -> list[ModelRun]:
    """The OracleLadder runs with a family to draw (a run stopped before any was finished
    has none: the report's notes name it)."""
    runs: list[ModelRun] = summaries_of(logs, LADDER_TASK)
    return [run for run in runs if run.tested]


def ladder_gaps(logs: Sequence[LoadedLog]) -> NamedFigure | None:
    """Stacked bars: each model's families split by outcome and gap label (tau = 1)."""
    runs = _reported_runs(logs)
    if not runs:
        return None
    fig = _figure()
    ax = fig.axes[0]
    profiles = [profile(run.families()) for run in runs]
    bottom = [0.0] * len(runs)
    labels = [run.name for run in runs]
    for g in GAP_ORDER:
        heights = [float(p.gaps[g]) for p in profiles]
        ax.bar(labels, heights, bottom=bottom, label=g.value)
        bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
    ax.set_ylabel(f"families (n = {', '.join(str(len(r.families())) for r in runs)})")
    _integer_ticks(ax)
    ax.set_ylim(0, max(bottom) * 1.35 or 1)  # room for the legend inside the axes
    ax.legend(fontsize="x-small", loc="upper right", ncols=2)
    return NamedFigure("ladder_gaps", "OracleLadder gap labels per model (tau = 1)", fig)


def ladder_tau(logs: Sequence[LoadedLog]) -> NamedFigure | None:
    """LadderOutcome counts at tau = 1..min(5, k), one panel per model: how robust the labels
    are (a threshold above the rollouts per probe could never be met, so it is not drawn)."""
    runs = _reported_runs(logs)
    if not runs:
        return None
    fig = _figure(width=max(WIDTH, 3.2 * len(runs)), ncols=len(runs))
    styles = ("o-", "s--", "^-.", "D:")  # lines that coincide (all at 0, say) stay apart
    for ax, run in zip(fig.axes, runs, strict=True):
        table = run.tau_table()
        k = run.rollouts_per_probe()
        taus = sorted(table)
        for o, style in zip(OUTCOME_ORDER, styles, strict=False):
            ax.plot(
                taus, [table[t][o] for t in taus], style, label=o.value, markersize=5, alpha=0.85
            )
        ax.set_title(f"{run.name} (k = {k}, n = {len(run.families())})", fontsize="medium")
        ax.set_xlabel("tau (correct rollouts needed)")
        ax.set_xticks(taus)
        _integer_ticks(ax)
    fig.axes[0].set_ylabel("families")
    fig.axes[-1].legend(fontsize="x-small", loc="best")
    return NamedFigure("ladder_tau", "OracleLadder outcome counts at tau = 1..min(5, k)", fig)


def onng_curve(logs: Sequence[LoadedLog]) -> NamedFigure | None:
    """Correct rate against lambda per model, with Wilson 95% intervals."""
    summaries: list[ONNGSummary] = summaries_of(logs, ONNG_TASK)
    models = [m for s in summaries for m in s.models.values()]
    if not models:
        return None
    fig = _figure()
    ax = fig.axes[0]
    for m in models:
        rows = m.rows()
        lams = [row.lam for row in m.by_lam]
        values = [r.value or 0.0 for r in rows]
        errors = [
            [max(0.0, v - r.ci[0]) for v, r in zip(values, rows, strict=True) if r.ci],
            [max(0.0, r.ci[1] - v) for v, r in zip(values, rows, strict=True) if r.ci],
        ]
        ax.errorbar(lams, values, yerr=errors, marker="o", capsize=3, label=m.model)
    ax.set_xlabel("noise level lambda")
    ax.set_ylabel("correct (%)")
    ax.set_ylim(0, 100)
    ax.legend(fontsize="small")
    return NamedFigure("onng_lambda", "O-NNG correct rate vs obfuscation level lambda", fig)


def passk_curves(logs: Sequence[LoadedLog]) -> NamedFigure | None:
    """pass@k against k (log scale) per model, with bootstrap 95% intervals over problems."""
    summaries: list[ProveSummary] = summaries_of(logs, PROVE_TASK)
    curves = [(s.model, [r for r in s.rows() if r.value is not None]) for s in summaries]
    curves = [(m, rows) for m, rows in curves if rows]
    if not curves:
        return None
    fig = _figure()
    ax = fig.axes[0]
    for model, rows in curves:
        ks = [int(r.metric.removeprefix("pass@")) for r in rows]
        values = [r.value or 0.0 for r in rows]
        lo = [max(0.0, v - (r.ci[0] if r.ci else v)) for v, r in zip(values, rows, strict=True)]
        hi = [max(0.0, (r.ci[1] if r.ci else v) - v) for v, r in zip(values, rows, strict=True)]
        ax.errorbar(ks, values, yerr=[lo, hi], marker="o", capsize=3, label=model)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("k")
    ax.set_ylabel("pass@k (%)")
    ax.set_ylim(0, 100)
    ax.legend(fontsize="small")
    return NamedFigure("passk", "Whole-proof pass@k (unbiased estimator, mean over problems)", fig)


def quadrant_scatter(
    xs: Sequence[float],
    ys: Sequence[float],
    labels: Sequence[str] | None,
    result: QuadrantResult,
    x_name: str,
    y_name: str,
) -> NamedFigure:
    """Models on (X, Y) with median lines; the forbidden high-Y/low-X cell shaded."""
    fig = _figure(width=5.0, height=4.0)
    ax = fig.axes[0]
    pad_x = (max(xs) - min(xs)) * 0.08 or 1.0
    pad_y = (max(ys) - min(ys)) * 0.08 or 1.0
    x_lim = (min(xs) - pad_x, max(xs) + pad_x)
    y_lim = (min(ys) - pad_y, max(ys) + pad_y)
    ax.fill_between(
        [x_lim[0], result.x_median],
        result.y_median,
        y_lim[1],
        color="red",
        alpha=0.12,
        label="forbidden (high Y, low X)",
    )
    ax.axvline(result.x_median, color="grey", linestyle="--", linewidth=1)
    ax.axhline(result.y_median, color="grey", linestyle="--", linewidth=1)
    ax.scatter(xs, ys, zorder=3)
    for x, y, label in zip(xs, ys, labels or [], strict=False):
        ax.annotate(label, (x, y), textcoords="offset points", xytext=(4, 4), fontsize="x-small")
    ax.set_xlim(*x_lim)
    ax.set_ylim(*y_lim)
    ax.set_xlabel(x_name)
    ax.set_ylabel(y_name)
    ax.set_title(
        f"forbidden = {result.forbidden} of n = {result.n}; exact p = {result.p_exact:.3g}",
        fontsize="medium",
    )
    ax.legend(fontsize="small", loc="lower right")
    return NamedFigure(
        "quadrant", f"Quadrant test: {y_name} vs {x_name} (median split, one-sided exact p)", fig
    )


DOSAGE_COLOURS = {"clb": "#c0392b", "orthogonal": "#2471a3", "random": "#7f8c8d"}


def dosage_figure(curve: DosageCurve, stem: str = "dosage") -> NamedFigure:
    """The seed's Figure 5: the metric against alpha per direction (baseline shared), with
    its bootstrap 95% CI, above bars of the incoherent share per condition."""
    from matplotlib.figure import Figure

    points = curve.points
    directions = [d for d in dict.fromkeys(p.direction for p in points) if d != BASELINE]
    fig = Figure(figsize=(WIDTH, 5.4), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=[3, 1])
    width = 0.8 / max(1, len(directions))
    span = (max(p.alpha for p in points) - min(p.alpha for p in points)) or 1.0
    for index, direction in enumerate(directions):
        series = sorted(
            (p for p in points if p.direction in (direction, BASELINE)), key=lambda p: p.alpha
        )
        alphas = [p.alpha for p in series]
        colour = DOSAGE_COLOURS.get(direction, f"C{index}")
        offset = (index - (len(directions) - 1) / 2) * width
        dodge = offset * 0.05 * span  # curves that coincide stay visible side by side
        top.errorbar(
            [a + dodge for a in alphas],
            [p.mean for p in series],
            yerr=[
                [max(0.0, p.mean - p.ci_low) if p.ci_low is not None else 0.0 for p in series],
                [max(0.0, p.ci_high - p.mean) if p.ci_high is not None else 0.0 for p in series],
            ],
            marker="o",
            capsize=3,
            color=colour,
            label=direction,
        )
        bottom.bar(
            [a + offset for a in alphas],
            [100 * p.incoherent for p in series],
            width=width,
            color=colour,
        )
    scale = "ZSCT (%)" if curve.metric == "zsct" else curve.metric
    if curve.metric == "zsct":
        top.axhline(50, linestyle="--", color="black", linewidth=0.8, label="chance")
    top.set_ylim(*((-2, 102) if curve.metric == "zsct" else (-0.02, 1.02)))  # the full scale
    bottom.set_ylim(0, 100)
    top.set_ylabel(f"{scale}, mean, 95% CI")
    top.set_title(
        curve.title + "\n" + textwrap.fill(curve.settings_text, 90), fontsize="small", loc="left"
    )
    top.legend(fontsize="small")
    bottom.set_ylabel("incoherent %")
    bottom.set_xlabel("alpha")
    caption = (
        f"{curve.title} ({curve.settings_text}): CLB direction {curve.base[:12]} and its "
        "controls at each alpha (mean over units, 95% bootstrap CI); below, the share of "
        "incoherent outputs"
    )
    return NamedFigure(stem, caption, fig)


def dosage_figures(curves: Sequence[DosageCurve]) -> list[NamedFigure]:
    """One dosage figure per curve (``dosage``, or ``dosage_1``, ``dosage_2``... for several)."""
    if len(curves) == 1:
        return [dosage_figure(curves[0])]
    return [dosage_figure(c, f"dosage_{i}") for i, c in enumerate(curves, start=1)]


def receptivity_constructivity(logs: Sequence[LoadedLog]) -> NamedFigure | None:
    """Models on (receptivity adj-ZSCT, constructivity adj-ZSCT), one point per model and
    preset, with the quadrant test of :mod:`gapscope.stats.quadrant` unchanged: the seed's
    claim (a receptive bottleneck collapses constructivity) forbids high constructivity with
    low receptivity. Where the test is undefined (too few models, or ties at a median, or
    presets mixed) the points are drawn alone and the title says why."""
    from gapscope.stats import quadrant_test

    pairs = axes(summaries_of(logs, S2B_TASK))
    if not pairs:
        return None
    presets = list(dict.fromkeys(p.preset for p in pairs))
    xs = [p.receptivity.value or 0.0 for p in pairs]
    ys = [p.constructivity.value or 0.0 for p in pairs]
    labels = [p.model if len(presets) == 1 else f"{p.model} [{p.preset}]" for p in pairs]
    setting = presets[0] if len(presets) == 1 else "mixed presets"
    x_name = f"receptivity adj-ZSCT [{setting}]"
    y_name = f"constructivity adj-ZSCT [{setting}]"
    caption = f"S2B-LM receptivity vs constructivity per model ({setting})"
    why = "presets differ: no quadrant test across them" if len(presets) > 1 else None
    if why is None:
        try:
            result = quadrant_test(xs, ys, labels)
        except ValueError as exc:
            why = f"quadrant test undefined: {exc}"
        else:
            drawn = quadrant_scatter(xs, ys, labels, result, x_name, y_name)
            return dataclasses.replace(
                drawn, stem="s2b_axes", caption=caption + "; " + drawn.caption
            )
    fig = _figure(width=5.0, height=4.0)
    ax = fig.axes[0]
    ax.scatter(xs, ys, zorder=3)
    for x, y, label in zip(xs, ys, labels, strict=True):
        ax.annotate(label, (x, y), textcoords="offset points", xytext=(4, 4), fontsize="x-small")
    ax.set_xlim(-5, 105)
    ax.set_ylim(-5, 105)
    ax.set_xlabel(x_name)
    ax.set_ylabel(y_name)
    ax.set_title(textwrap.fill(why, 60), fontsize="medium")
    return NamedFigure("s2b_axes", caption, fig)
