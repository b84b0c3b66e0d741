"""miniF2F-style problems: a theorem statement to prove and the file header it needs.

Records carry ``name``, ``split``, ``header`` and ``formal_statement`` (the statement up to
and including ``:= by``), the shape of the Lean 4 miniF2F conversions. They load from a local
JSONL file first and from a Hugging Face dataset id only when no such file exists (offline
first). A bad record is skipped and reported with its line and field; the rest still load,
so one typo costs one problem, not the run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from gapscope.records import RecordProblem, jsonl_rows, read_source

FIELDS = ("name", "split", "header", "formal_statement")
_PROOF_OPENER = re.compile(r":=\s*by\s*$")
_TRAILING_SORRY = re.compile(r"\s*sorry\s*$")

NAMED_SUBSETS: dict[str, str] = {
    "aime": r"aime",
    "amc": r"amc",
    "imo": r"imo",
    "competition": r"(amc|aime|imo)",
}
"""Named subsets as name-prefix patterns. ``aime`` is the seed's AIME transfer set (15 test
problems in miniF2F-lean4); ``competition`` is its AMC/AIME/IMO hard tail (80 of 244 test)."""


@dataclass(frozen=True)
class Problem:
    """One theorem to prove; ``formal_statement`` ends with ``:= by``."""

    name: str
    split: str
    header: str
    formal_statement: str

    @property
    def signature(self) -> str:
        """The statement without its ``:= by``: what a proof must be attached to."""
        return _PROOF_OPENER.sub("", self.formal_statement).rstrip()


@dataclass(frozen=True)
class LoadResult:
    """The problems that validated and one entry per fault of the records that did not."""

    problems: list[Problem]
    skipped: list[RecordProblem]


def _faults(record: object, default_split: str | None) -> list[tuple[str, str]]:
    if not isinstance(record, Mapping):
        return [("record", f"expected a JSON object, got {type(record).__name__}")]
    faults: list[tuple[str, str]] = []
    for key in FIELDS:
        value = record.get(key)
        if value is None and key == "split" and default_split is not None:
            continue
        if value is None:
            faults.append((key, "missing"))
        elif not isinstance(value, str):
            faults.append((key, f"expected a string, got {type(value).__name__}"))
        elif key != "header" and not value.strip():
            faults.append((key, "empty"))
    statement = record.get("formal_statement")
    if (
        isinstance(statement, str)
        and statement.strip()
        and not _PROOF_OPENER.search(_TRAILING_SORRY.sub("", statement))
    ):
        faults.append(("formal_statement", "must end with ':= by' (optionally + 'sorry')"))
    return faults


def read_records(
    rows: Iterable[tuple[int, object]], default_split: str | None = None
) -> LoadResult:
    """Validate numbered records; skip bad ones and repeated names (the first is kept).

    ``default_split`` fills a missing ``split`` (Hub datasets keep the split outside the row).
    A trailing ``sorry`` after ``:= by`` is dropped, since some conversions keep it.
    """
    problems: list[Problem] = []
    skipped: list[RecordProblem] = []
    first_line: dict[str, int] = {}
    for line, record in rows:
        raw_name = record.get("name") if isinstance(record, Mapping) else None
        name = raw_name if isinstance(raw_name, str) and raw_name.strip() else None
        faults = _faults(record, default_split)
        if faults:
            skipped.extend(RecordProblem(line, name, field, msg) for field, msg in faults)
            continue
        assert isinstance(record, Mapping) and name is not None
        if name in first_line:
            message = f"duplicate name (first seen on line {first_line[name]}, kept there)"
            skipped.append(RecordProblem(line, name, "name", message))
            continue
        first_line[name] = line
        statement = _TRAILING_SORRY.sub("", record["formal_statement"])
        split = record.get("split") or default_split
        problems.append(Problem(name, str(split), record["header"], statement))
    return LoadResult(problems, skipped)


def parse_jsonl(text: str) -> LoadResult:
    """Problems from JSONL text; a line that is not JSON is skipped and reported."""
    rows, bad = jsonl_rows(text)
    result = read_records(rows)
    return LoadResult(result.problems, sorted([*bad, *result.skipped], key=lambda p: p.line))


def load_problems(source: str | Path, *, split: str = "test") -> LoadResult:
    """Problems from a local JSONL file or, when no such path exists, a Hub dataset id.

    A local file holds every split (filter with :func:`select`); from the Hub only ``split``
    is fetched, and rows without a ``split`` field get it.
    """
    found = read_source(source, split=split, what="problems")
    result = read_records(found.rows, default_split=split if found.from_hub else None)
    skipped = sorted([*found.bad_lines, *result.skipped], key=lambda p: p.line)
    return LoadResult(result.problems, skipped)


def subset_pattern(subset: str) -> re.Pattern[str] | None:
    """The name filter of ``subset``: ``all``, a named subset, ``prefix:P`` or ``regex:R``.

    Named subsets and prefixes match the start of the name; a regex is searched anywhere
    (anchor it with ``^`` to match the start).
    """
    if subset == "all":
        return None
    if subset in NAMED_SUBSETS:
        return re.compile(NAMED_SUBSETS[subset])
    kind, sep, value = subset.partition(":")
    if sep and value and kind == "prefix":
        return re.compile(re.escape(value))
    if sep and value and kind == "regex":
        try:
            return re.compile(value)
        except re.error as err:
            raise ValueError(f"subset regex {value!r} is invalid: {err}") from None
    raise ValueError(
        f"unknown subset {subset!r}; use 'all', {', '.join(map(repr, NAMED_SUBSETS))},"
        " 'prefix:NAME_PREFIX' or 'regex:PATTERN'"
    )


def select(
    problems: Sequence[Problem],
    *,
    split: str | None = "test",
    subset: str = "all",
    limit: int | None = None,
) -> list[Problem]:
    """Problems of ``split`` (None: any) whose name fits ``subset``, the first ``limit``."""
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be >= 1, got {limit}")
    pattern = subset_pattern(subset)
    prefix_only = subset in NAMED_SUBSETS or subset.startswith("prefix:")
    chosen = [
        p
        for p in problems
        if (split is None or p.split == split)
        and (
            pattern is None
            or (pattern.match(p.name) if prefix_only else pattern.search(p.name)) is not None
        )
    ]
    return chosen[:limit] if limit is not None else chosen
