"""``gapscope report`` and ``gapscope compare``: the commands over logs of any diagnostic."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from gapscope.analysis import View
from gapscope.app.kit import (
    JsonOut,
    command_output,
    read_or_fail,
    refuse_overwriting,
    require_directory,
)

if TYPE_CHECKING:
    from gapscope.analysis import NamedFigure


def _quadrant_figure(csv: Path, x: str, y: str, label: str | None) -> NamedFigure:
    from gapscope.analysis import quadrant_scatter
    from gapscope.app.csv_columns import read_columns
    from gapscope.stats import quadrant_test

    xs, ys, labels = read_columns(csv, x, y, label)
    try:
        result = quadrant_test(xs, ys, labels)
    except ValueError as exc:
        raise typer.BadParameter(f"{csv.name}: {exc}", param_hint="--quadrant") from None
    return quadrant_scatter(xs, ys, labels, result, x, y)


def report_command(
    logs: Annotated[
        list[Path], typer.Argument(help="Logs or directories of logs, any diagnostic, any model.")
    ],
    out: Annotated[Path, typer.Option(help="The HTML file to write.")] = Path("report.html"),
    quadrant: Annotated[
        Path | None, typer.Option(help="Models CSV for the quadrant scatter (with --x, --y).")
    ] = None,
    x: Annotated[str | None, typer.Option("--x", help="Quadrant: capability column.")] = None,
    y: Annotated[str | None, typer.Option("--y", help="Quadrant: outcome column.")] = None,
    label: Annotated[str | None, typer.Option(help="Quadrant: model-name column.")] = None,
    json_out: JsonOut = False,
) -> None:
    """One self-contained HTML report: gap profile, figures (also PNG + SVG), comparisons."""
    from gapscope.analysis import (
        expand_log_paths,
        glance_dict,
        load_all,
        print_glance,
        print_rows,
        write_report,
    )

    if out.is_dir():
        raise typer.BadParameter(
            f"{out} is a directory; give an .html file name", param_hint="--out"
        )
    require_directory(out.parent, "--out")
    if quadrant is not None and (x is None or y is None):
        raise typer.BadParameter("--quadrant needs --x COL and --y COL", param_hint="--quadrant")
    with command_output("report", json_out) as output:
        loaded = read_or_fail(output, lambda: load_all(logs))
        output.logs.extend(str(x.path) for x in loaded.logs)
        inputs = [("log", path) for path in expand_log_paths(logs)]
        if quadrant is not None:
            inputs.append(("--quadrant", quadrant))
        refuse_overwriting(out, "--out", inputs)
        extra = [_quadrant_figure(quadrant, x, y, label)] if quadrant and x and y else []
        try:
            out.parent.mkdir(parents=True, exist_ok=True)  # --out reports/r.html makes reports/
            report = write_report(loaded, out, extra)
        except OSError as exc:  # the HTML or a figure beside it
            where = exc.filename or out
            raise typer.BadParameter(
                f"{where}: cannot write the report: {exc.strerror or exc}", param_hint="--out"
            ) from None
        details = {
            "html": str(report.html),
            "glance": glance_dict(report.glance),
            "figures": {stem: [str(p) for p in paths] for stem, paths in report.figures.items()},
            "comparisons": [c.to_dict() for c in report.comparisons],
            "dosage": [c.to_dict() for c in report.curves],
            "notes": report.notes,
        }

        def show(console: Console) -> None:
            print_glance(report.glance, console)
            print_rows(report.rows, console)
            console.print(f"report: {report.html} ({len(report.figures)} figures)")

        output.finish(View(report.rows, details, show, report.notes))


def compare_command(
    a: Annotated[Path, typer.Argument(help="Model A: a log or a directory of logs.")],
    b: Annotated[Path, typer.Argument(help="Model B: the same diagnostics on the same items.")],
    intersect: Annotated[
        bool, typer.Option("--intersect", help="Compare the items both sides have.")
    ] = False,
    seed: Annotated[int, typer.Option(help="Seed of the paired bootstrap.")] = 0,
    json_out: JsonOut = False,
) -> None:
    """Paired comparison per metric: exact McNemar, bootstrap CI of A - B, Holm; OracleLadder
    transition matrix. Refuses differing item sets (saying how many differ) unless --intersect."""
    from gapscope.analysis import compare_runs, load_all, print_comparison

    with command_output("compare", json_out) as output:
        side_a = read_or_fail(output, lambda: load_all([a]))
        side_b = read_or_fail(output, lambda: load_all([b]))
        output.logs.extend(str(x.path) for x in (*side_a.logs, *side_b.logs))
        notes = [f"A: {n}" for n in side_a.notes] + [f"B: {n}" for n in side_b.notes]
        result = read_or_fail(
            output,
            lambda: compare_runs(
                side_a.logs, side_b.logs, intersect=intersect, seed=seed, loading_notes=notes
            ),
        )

        def show(console: Console) -> None:
            print_comparison(result, console)

        output.finish(View(result.rows, result.to_dict(), show, result.notes))
