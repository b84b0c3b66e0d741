"""T2 records in the released format, loaded from JSONL or the Hub with per-field validation.

The release (``ldilab/T2`` ``data/final/*.jsonl``) has nine string fields per record. A record
that lacks one, or has a non-string value, is reported by line, id and field and skipped; the
others still load. Semantic defects (truncated targets, duplicates, ...) are the audit's job
(``gapscope.t2.audit``), not the loader's: the loader only guarantees the shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gapscope.records import RecordProblem, read_source

FIELDS: tuple[str, ...] = (
    "id",
    "target_code",
    "formal_language",
    "natural_language",
    "target_code_name",
    "before_target_code",
    "after_target_code",
    "header",
    "dataset_name",
)


@dataclass(frozen=True)
class T2Record:
    """One T2 problem: a target declaration with the file around it.

    ``line`` is where the record was read (1-based line, or Hub row), kept so that every later
    message can point back at it.
    """

    id: str
    target_code: str
    formal_language: str
    natural_language: str
    target_code_name: str
    before_target_code: str
    after_target_code: str
    header: str
    dataset_name: str
    line: int = 0


@dataclass(frozen=True)
class LoadedRecords:
    """The records that have the right shape, and a problem for every one that has not."""

    records: list[T2Record]
    problems: list[RecordProblem]


def parse_record(line: int, raw: object) -> T2Record | RecordProblem:
    """One decoded row -> a record, or the problem naming the first bad field."""
    if not isinstance(raw, dict):
        return RecordProblem(line, None, None, f"expected a JSON object, got {type(raw).__name__}")
    rid = raw.get("id")
    name = rid if isinstance(rid, str) and rid else None
    for field in FIELDS:
        if field not in raw:
            return RecordProblem(line, name, field, "missing")
        if not isinstance(raw[field], str):
            kind = type(raw[field]).__name__
            return RecordProblem(line, name, field, f"must be a string, got {kind}")
    if not name:
        return RecordProblem(line, None, "id", "must not be empty")
    if not raw["target_code"].strip():
        return RecordProblem(line, name, "target_code", "must not be empty")
    return T2Record(**{field: raw[field] for field in FIELDS}, line=line)


def project_path_problem(record: T2Record) -> RecordProblem | None:
    """Why the record cannot name a file inside a project (the repository track), or None.

    The repository track writes generated code into ``<dataset_name>/<file of the id>`` of a
    private copy, so both must stay inside it: an absolute path or a ``..`` would send that
    write somewhere else, possibly into the user's own files.
    """
    name = record.dataset_name
    if name in (".", "..") or "/" in name or "\\" in name or "\0" in name:
        return RecordProblem(
            record.line, record.id, "dataset_name", f"must be a folder name, got {name!r}"
        )
    cut = record.id.find(".lean")
    if cut < 0:
        return RecordProblem(record.line, record.id, "id", "names no .lean file")
    file = record.id[: cut + len(".lean")]
    parts = file.split("/")
    if file.startswith("/") or "\0" in file or any(p in ("", ".", "..") for p in parts):
        return RecordProblem(
            record.line,
            record.id,
            "id",
            f"its file {file!r} must be a relative path with no '.', '..' or empty part",
        )
    return None


def load_records(source: str | Path, *, split: str = "train") -> LoadedRecords:
    """Records of a local JSONL file or a Hub dataset id (``split`` applies to the Hub only).

    Raises ``gapscope.records.SourceError`` when the source itself cannot be read.
    """
    rows = read_source(source, split=split, what="T2 records")
    records: list[T2Record] = []
    problems = list(rows.bad_lines)
    for line, raw in rows.rows:
        parsed = parse_record(line, raw)
        if isinstance(parsed, RecordProblem):
            problems.append(parsed)
        else:
            records.append(parsed)
    return LoadedRecords(records, problems)
