"""``gapscope stats`` sub-commands.

Mounted by the main CLI with ``app.add_typer(stats_app, name="stats")``.  Input is a plain
CSV (one row per model) read with the :mod:`csv` module, so no pandas is needed.  Every input
problem -- missing column, non-numeric or non-finite cell, a statistically unusable split --
exits with code 2 (click's usage-error code) and a message naming the column or row, because
these are caller mistakes, not crashes.
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from gapscope.clikit import JsonOut, Result, command_output
from gapscope.stats.quadrant import QuadrantResult, quadrant_test

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


def read_columns(
    path: Path, x_col: str, y_col: str, label_col: str | None
) -> tuple[list[float], list[float], list[str] | None]:
    """Read the requested columns, converting X and Y to floats.

    Row numbers in errors count data rows from 1 (the header is not a data row) and also give
    the physical line number, so the offending cell is easy to find in an editor.
    """
    try:
        # utf-8-sig: a spreadsheet's byte-order mark must not become part of the first name
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise typer.BadParameter(
            f"{path.name} is not a UTF-8 text CSV (byte {exc.start} is not UTF-8)",
            param_hint="FILE",
        ) from None
    except OSError as exc:
        raise typer.BadParameter(f"cannot read {path}: {exc}", param_hint="FILE") from exc
    if "\x00" in text:
        raise typer.BadParameter(
            f"{path.name} holds NUL bytes: a binary file, not a CSV", param_hint="FILE"
        )
    try:
        return _parse_columns(path, io.StringIO(text, newline=""), x_col, y_col, label_col)
    except csv.Error as exc:
        raise typer.BadParameter(
            f"{path.name} is not a valid CSV: {exc}", param_hint="FILE"
        ) from None


def _parse_columns(
    path: Path, fh: io.StringIO, x_col: str, y_col: str, label_col: str | None
) -> tuple[list[float], list[float], list[str] | None]:
    """The columns of an already decoded CSV text (see :func:`read_columns`)."""
    reader = csv.DictReader(fh)
    header = reader.fieldnames or []
    for col, hint in ((x_col, "--x"), (y_col, "--y"), (label_col, "--label")):
        if col is not None and col not in header:
            available = ", ".join(repr(h) for h in header) or "(none: empty file)"
            raise typer.BadParameter(
                f"column {col!r} not found in {path.name}; available columns: {available}",
                param_hint=hint,
            )
    xs: list[float] = []
    ys: list[float] = []
    labels: list[str] | None = [] if label_col is not None else None
    for row_no, row in enumerate(reader, start=1):
        for col, dest in ((x_col, xs), (y_col, ys)):
            raw = row.get(col)
            where = f"row {row_no} (line {reader.line_num}): column {col!r}"
            try:
                value = float(raw if raw is not None else "")
            except ValueError:
                raise typer.BadParameter(
                    f"{where} has non-numeric value {raw!r}", param_hint="FILE"
                ) from None
            if not math.isfinite(value):
                raise typer.BadParameter(
                    f"{where} has non-finite value {raw!r}; remove or impute it",
                    param_hint="FILE",
                )
            dest.append(value)
        if labels is not None and label_col is not None:
            labels.append(row.get(label_col) or f"row {row_no}")
    if not xs:
        raise typer.BadParameter(f"{path.name} has a header but no data rows", param_hint="FILE")
    return xs, ys, labels


def _render(result: QuadrantResult, x_col: str, y_col: str, console: Console) -> None:
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
        console.print("forbidden-cell models: " + ", ".join(result.forbidden_labels))
    console.print(
        f"p (exact, {result.p_method} over {result.n_placements} placements) = {result.p_exact:.6g}"
    )
    console.print(f"p (hypergeometric cross-check) = {result.p_hypergeom:.6g}")


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
    with command_output("stats quadrant", as_json) as out:
        xs, ys, labels = read_columns(file, x, y, label)
        try:
            result = quadrant_test(xs, ys, labels)
        except ValueError as exc:
            out.fail(f"{file.name}: {exc}")
        # Column names are user data: no markup parsing (a '[' must not be read as a style tag).
        out.finish(
            Result(
                details=result.to_dict(),
                show=lambda _: _render(result, x, y, Console(markup=False, highlight=False)),
            )
        )
