"""Two numeric columns (and an optional label column) of a per-model CSV, for ``stats quadrant``
and the report's quadrant figure.

Read with the :mod:`csv` module, so no pandas is needed. Every problem is the caller's input
(``typer.BadParameter`` naming the file, column or row), never a traceback.
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import typer


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
