"""The defect audit: what is wrong with T2 records, found before anything is evaluated.

The released records have defects (docs/t2.md): targets cut off before their body, duplicate
ids, ``formal_language`` that is not its parts, targets that occur more than once, rows where no
later declaration uses the target. A record with any defect is reported and skipped, never
evaluated silently; ``gapscope t2 audit`` prints the counts and ids, ``run t2`` says how many
it skipped and why.

Of the records without a defect, those with fewer than ``min_successors`` successors (the
declarations that use the target; the paper keeps |T_succ| >= 2) are filtered out next: a
record tested by one declaration says little about the answer's meaning. The funnel counts
each stage (records -> without defects -> with enough successors).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from gapscope.records import RecordProblem
from gapscope.t2.declarations import has_body, unbalanced_bracket
from gapscope.t2.records import T2Record
from gapscope.t2.successors import Successor, record_successors


class Defect(StrEnum):
    """One class of record defect (see docs/t2.md for each)."""

    INVALID_RECORD = "invalid_record"
    TARGET_NO_BODY = "target_no_body"
    TARGET_UNBALANCED = "target_unbalanced"
    DUPLICATE_ID = "duplicate_id"
    FORMAL_LANGUAGE_MISMATCH = "formal_language_mismatch"
    TARGET_NOT_FOUND_ONCE = "target_not_found_once"
    NO_MENTIONING_SUCCESSOR = "no_mentioning_successor"
    TOO_FEW_SUCCESSORS = "too_few_successors"
    """Not a defect but the paper's filter, applied only to records with no defect."""


@dataclass(frozen=True)
class Finding:
    """One defect of one record: ``line`` and ``id`` say which, ``detail`` says how."""

    defect: Defect
    line: int
    id: str | None
    detail: str


@dataclass
class Audit:
    """Every finding, and the records that have none (the ones ``run t2`` evaluates)."""

    total: int
    min_successors: int = 2
    findings: list[Finding] = field(default_factory=list)
    valid: list[T2Record] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        """Records per defect class (a record with two defects counts in both)."""
        counted = Counter(f.defect.value for f in self.findings)
        return {d.value: counted.get(d.value, 0) for d in Defect}

    def ids(self) -> dict[str, list[str]]:
        """The offending ids per defect class, in file order (a line number when no id)."""
        out: defaultdict[str, list[str]] = defaultdict(list)
        for f in self.findings:
            out[f.defect.value].append(f.id if f.id is not None else f"line {f.line}")
        return dict(out)

    def skipped(self) -> int:
        return self.total - len(self.valid)

    def funnel(self) -> dict[str, int]:
        """Records left after each stage: all, without defects, with enough successors."""
        too_few = self.counts()[Defect.TOO_FEW_SUCCESSORS.value]
        return {
            "records": self.total,
            "without_defects": len(self.valid) + too_few,
            f"successors>={self.min_successors}": len(self.valid),
        }

    def to_dict(self) -> dict[str, object]:
        return {
            "records": self.total,
            "valid": len(self.valid),
            "skipped": self.skipped(),
            "min_successors": self.min_successors,
            "funnel": self.funnel(),
            "counts": self.counts(),
            "ids": self.ids(),
            "findings": [
                {"defect": f.defect.value, "line": f.line, "id": f.id, "detail": f.detail}
                for f in self.findings
            ],
        }


_SPACE = re.compile(r"\s+")


def _squash(text: str) -> str:
    return _SPACE.sub("", text)


FileText = Callable[[T2Record], "str | None"]
"""The repository file a record's target lives in (None when there is no such file; ValueError
when the record cannot name a file inside the repository)."""


SuccessorsOf = Callable[[T2Record], Sequence[Successor]]
"""A record's successors: in its ``after_target_code`` (the file track, ``successors``) or
across its project (the repository track, ``gapscope.t2.repo.RepoSuccessors``)."""


def record_defects(
    record: T2Record, tests: Sequence[Successor], file_text: FileText | None = None
) -> list[tuple[Defect, str]]:
    """The defects one record has on its own (duplicates need the whole file); ``tests``: its
    successors.

    With ``file_text`` (the repository track) the target must be found once in its real file;
    ``formal_language`` is then not the file and is not compared.
    """
    found: list[tuple[Defect, str]] = []
    if not has_body(record.target_code):
        found.append((Defect.TARGET_NO_BODY, "target_code has no ':=', 'where' or '|' body"))
    bracket = unbalanced_bracket(record.target_code)
    if bracket is not None:
        found.append((Defect.TARGET_UNBALANCED, f"target_code: {bracket}"))
    if file_text is not None:
        try:
            text = file_text(record)
        except ValueError as err:  # the record names no file inside the project
            found.append((Defect.INVALID_RECORD, str(err)))
        else:
            found.extend(_file_defects(record, text))
    else:
        found.extend(_formal_language_defects(record))
    if not tests:
        found.append((Defect.NO_MENTIONING_SUCCESSOR, "no declaration after the target uses it"))
    return found


def _file_defects(record: T2Record, text: str | None) -> list[tuple[Defect, str]]:
    if text is None:
        return [(Defect.TARGET_NOT_FOUND_ONCE, "its file is not in the repository")]
    count = text.count(record.target_code)
    if count != 1:
        return [(Defect.TARGET_NOT_FOUND_ONCE, f"target_code occurs {count} times in its file")]
    return []


def _formal_language_defects(record: T2Record) -> list[tuple[Defect, str]]:
    found: list[tuple[Defect, str]] = []
    parts = (
        record.header + record.before_target_code + record.target_code + record.after_target_code
    )
    if _squash(parts) != _squash(record.formal_language):
        found.append(
            (
                Defect.FORMAL_LANGUAGE_MISMATCH,
                "formal_language != header + before + target + after (whitespace ignored)",
            )
        )
    occurrences = record.formal_language.count(record.target_code)
    if occurrences != 1:
        found.append(
            (
                Defect.TARGET_NOT_FOUND_ONCE,
                f"target_code occurs {occurrences} times in formal_language",
            )
        )
    return found


def audit_records(
    records: Sequence[T2Record],
    problems: Sequence[RecordProblem] = (),
    file_text: FileText | None = None,
    min_successors: int = 2,
    successors_of: SuccessorsOf = record_successors,
) -> Audit:
    """Audit loaded records; ``problems`` (the loader's) count as ``invalid_record``.

    Of records sharing an id, the first is kept and every later one is a ``duplicate_id``
    (the released evaluator also keeps one per id); whether the copies differ is in the detail.
    A record with no defect and fewer than ``min_successors`` successors is
    ``too_few_successors``. ``successors_of`` counts them (the repository track counts
    across the project).
    """
    if min_successors < 0:
        raise ValueError(f"min_successors must be >= 0, got {min_successors}")
    result = Audit(total=len(records) + len(problems), min_successors=min_successors)
    for problem in problems:
        result.findings.append(
            Finding(Defect.INVALID_RECORD, problem.line, problem.record, str(problem))
        )
    first: dict[str, T2Record] = {}
    for record in records:
        tests = successors_of(record)  # a project-wide search in the repository track: once
        own = record_defects(record, tests, file_text)
        kept = first.get(record.id)
        if kept is None:
            first[record.id] = record
        else:
            same = "identical" if _same(kept, record) else "different content"
            own.append((Defect.DUPLICATE_ID, f"id first seen on line {kept.line} ({same})"))
        if not own:
            count = len(tests)
            if count < min_successors:
                detail = f"{count} successor(s), fewer than {min_successors}"
                own.append((Defect.TOO_FEW_SUCCESSORS, detail))
        for defect, detail in own:
            result.findings.append(Finding(defect, record.line, record.id, detail))
        if not own:
            result.valid.append(record)
    result.findings.sort(key=lambda f: (f.line, list(Defect).index(f.defect)))
    return result


def _same(a: T2Record, b: T2Record) -> bool:
    return (a.target_code, a.before_target_code, a.after_target_code) == (
        b.target_code,
        b.before_target_code,
        b.after_target_code,
    )
