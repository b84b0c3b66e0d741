"""``gapscope stats`` sub-commands.

Mounted by the main CLI with ``app.add_typer(stats_app, name="stats")``.  Input is a plain
CSV (one row per model, :mod:`.csv_columns`).  Every input problem -- missing column,
non-numeric or non-finite cell, a statistically unusable split -- exits with code 2 (click's
usage-error code) and a message naming the column or row, because these are caller mistakes,
not crashes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gapscope.analysis import View
from gapscope.app.csv_columns import read_columns
from gapscope.app.kit import JsonOut, command_output
from gapscope.stats import quadrant_test

__all__ = ["stats_app"]

stats_app = typer.Typer(
    help="Statistical checks on per-model results (e.g. the median-split quadrant test).",
    no_args_is_help=True,
)


@stats_app.callback()
def _stats_callback() -> None:
    """Statistical checks on per-model results."""
    # An explicit callback keeps ``quadrant`` a named sub-command even while it is the only
    # command; otherwise typer would collapse the app into that single command.


@stats_app.command("quadrant")
def quadrant(
    file: Annotated[
        Path,
        typer.Argument(
            exists=True,
            dir_okay=False,
            readable=True,
            metavar="FILE.csv",
            help="CSV file with a header row, one row per model.",
        ),
    ],
    x: Annotated[str, typer.Option("--x", help="Column of the putative necessary capability (X).")],
    y: Annotated[str, typer.Option("--y", help="Column of the outcome (Y).")],
    label: Annotated[str | None, typer.Option("--label", help="Column naming each model.")] = None,
    as_json: JsonOut = False,
) -> None:
    """Median-split quadrant test: is the high-Y/low-X cell depleted?

    One-sided exact p-value P(forbidden <= observed) over all placements of the high-Y labels
    with both margins fixed.  Values equal to a median count as low.
    """
    from gapscope.analysis import print_quadrant

    with command_output("stats quadrant", as_json) as out:
        xs, ys, labels = read_columns(file, x, y, label)
        try:
            result = quadrant_test(xs, ys, labels)
        except ValueError as exc:
            out.fail(f"{file.name}: {exc}")
        out.finish(
            View(
                details=result.to_dict(),
                show=lambda console: print_quadrant(result, x, y, console),
            )
        )
