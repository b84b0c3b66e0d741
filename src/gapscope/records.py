"""Reading user records: every bad line or field is reported by number and skipped alone.

The loaders of every diagnostic (OracleLadder families, miniF2F problems, teacher problems)
share this: a malformed record names itself and its field, and the others still load.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RecordProblem:
    """Why a line or record was skipped.

    ``line`` is 1-based (the row number for Hub data); ``record`` is the record's id (a pid, a
    problem name) when it could be read; ``field`` is the field at fault, if one is.
    """

    line: int
    record: str | None
    field: str | None
    message: str

    def __str__(self) -> str:
        where = f"line {self.line}" + (f" ({self.record})" if self.record else "")
        return (
            f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"
        )


def jsonl_rows(text: str) -> tuple[list[tuple[int, object]], list[RecordProblem]]:
    """``(line, value)`` for every JSON line; a problem for every line that is not JSON.

    Blank lines are neither.
    """
    rows: list[tuple[int, object]] = []
    bad: list[RecordProblem] = []
    for line, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            rows.append((line, json.loads(raw)))
        except json.JSONDecodeError as err:
            bad.append(
                RecordProblem(line, None, None, f"not valid JSON ({err.msg}, column {err.colno})")
            )
    return rows, bad


class SourceError(RuntimeError):
    """The source itself cannot be read (missing file, no ``datasets``, offline, bad id)."""


_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")
_OFFLINE_VARS = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")


@dataclass(frozen=True)
class SourceRows:
    """The raw rows of a source, its non-JSON lines, and whether it came from the Hub."""

    rows: list[tuple[int, object]]
    bad_lines: list[RecordProblem]
    from_hub: bool


def read_source(source: str | Path, *, split: str, what: str) -> SourceRows:
    """Rows of a local JSONL file or, when no such path exists, of a Hub dataset id.

    Local first (the house rule is offline first): the Hub is tried only for a string shaped
    like ``owner/name`` that names no local path and no ``.json``/``.jsonl`` file; ``split``
    applies to the Hub only. ``what`` names the records in error messages.
    """
    path = Path(source)
    if path.is_file():
        rows, bad = jsonl_rows(path.read_text(encoding="utf-8"))
        return SourceRows(rows, bad, from_hub=False)
    if path.exists():
        raise SourceError(f"{path} is a directory; pass the .jsonl file of {what}")
    if (
        isinstance(source, Path)
        or not _HUB_ID.fullmatch(source)
        or path.suffix in {".json", ".jsonl"}
    ):
        raise SourceError(f"no such file: {path}")
    return SourceRows(list(_hub_rows(source, split)), [], from_hub=True)


def _hub_rows(dataset_id: str, split: str) -> Iterator[tuple[int, object]]:
    if any(os.environ.get(v, "").lower() in {"1", "true", "yes", "on"} for v in _OFFLINE_VARS):
        raise SourceError(
            f"{dataset_id!r} is not a local file and Hugging Face offline mode is on"
            f" ({' / '.join(_OFFLINE_VARS)}); pass the path of a local JSONL copy instead"
        )
    try:
        import datasets
    except ImportError as err:
        raise SourceError(
            f"{dataset_id!r} is not a local file; loading it from the Hugging Face Hub needs"
            " the `datasets` package: run `pip install datasets`, or pass a local JSONL path"
        ) from err
    try:
        rows = datasets.load_dataset(dataset_id, split=split)
    except Exception as err:  # the Hub client raises many types; all mean "cannot fetch"
        raise SourceError(
            f"could not load {dataset_id!r} (split {split!r}) from the Hugging Face Hub: {err}."
            " Check the dataset id, the split and your connection, or pass a local JSONL path"
        ) from err
    return enumerate(rows, start=1)
