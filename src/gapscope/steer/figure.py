"""The dosage-curve figure (seed, Figure 5): the metric against alpha per direction, with its
bootstrap CI, above a bar plot of the incoherent share per condition. Written as PNG and SVG.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

# The object-oriented Figure (no pyplot): no global state, no GUI backend, safe in threads.
from matplotlib.figure import Figure

from gapscope.steer.dosage import BASELINE, CurvePoint

COLOURS = {"clb": "#c0392b", "orthogonal": "#2471a3", "random": "#7f8c8d"}


def _series(points: Sequence[CurvePoint], direction: str) -> list[CurvePoint]:
    """A direction's points with the shared baseline, sorted by alpha."""
    chosen = [p for p in points if p.direction in (direction, BASELINE)]
    return sorted(chosen, key=lambda p: p.alpha)


def write_figure(
    points: Sequence[CurvePoint], out: Path, *, metric: str, title: str
) -> tuple[Path, Path]:
    """Draw the curve and the coherence bars; returns the PNG and SVG paths."""
    directions = [d for d in dict.fromkeys(p.direction for p in points) if d != BASELINE]
    fig = Figure(figsize=(7, 6))
    top, bottom = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    width = 0.8 / max(1, len(directions))
    for index, direction in enumerate(directions):
        series = _series(points, direction)
        alphas = [p.alpha for p in series]
        colour = COLOURS.get(direction, f"C{index}")
        top.errorbar(
            alphas,
            [p.mean for p in series],
            yerr=[
                [p.mean - p.ci_low for p in series],
                [p.ci_high - p.mean for p in series],
            ],
            marker="o",
            capsize=3,
            color=colour,
            label=direction,
        )
        offset = (index - (len(directions) - 1) / 2) * width
        bottom.bar(
            [a + offset for a in alphas],
            [100 * p.incoherent for p in series],
            width=width,
            color=colour,
        )
    if metric == "zsct":
        top.axhline(50, linestyle="--", color="black", linewidth=0.8, label="chance")
    top.set_ylabel(f"{metric} (mean, 95% bootstrap CI)")
    top.set_title(title)
    top.legend()
    bottom.set_ylabel("incoherent %")
    bottom.set_xlabel("alpha")
    fig.tight_layout()
    out.mkdir(parents=True, exist_ok=True)
    png, svg = out / "dosage.png", out / "dosage.svg"
    fig.savefig(png, dpi=150)
    fig.savefig(svg, metadata={"Date": None})
    return png, svg
