"""Reading user records: every bad line or field is reported by number and skipped alone.

The loaders of every diagnostic (OracleLadder families, miniF2F problems, teacher problems)
share this: a malformed record names itself and its field, and the others still load.
"""

from __future__ import annotations

import json
from dataclasses import dataclass


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
