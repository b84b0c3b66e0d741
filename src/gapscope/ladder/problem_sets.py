"""The paper's replication sets, MATH500 and AIME 2024/25, read as problems for the teacher.

Appendix N replicates the roadmap effect on MATH500 and AIME 2024/25: a teacher compiles
their problems into families, a direct-failure screen keeps those the anchor cannot solve
directly (7% of MATH500, 63% of AIME 2024/25), and matched roadmaps are tested against their
corrupted controls. This module only reads the problems; compilation, the screen and the
tests are the main set's (``ladder compile``, ``ladder screen --direct-failure-only``,
``ladder report``).

The common copies of these sets name their fields differently: MATH500 has ``problem``,
``solution``, ``answer`` and ``unique_id``; one AIME 2024 copy has ``id``, ``problem`` and a
``solution`` that is only ``\\boxed{answer}``; AIME 2025 copies have just ``problem`` and
``answer``; Hub copies may capitalise them. One reader takes all of these. Local JSONL first,
a Hugging Face dataset id second (as every loader here), every bad record reported by line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gapscope.ladder.compile import TeacherProblem
from gapscope.records import RecordProblem, read_source
from gapscope.verify import extract_boxed


@dataclass(frozen=True)
class ProblemSet:
    """A replication set: its name (the pid prefix) and the Hub split to read."""

    name: str
    split: str


PROBLEM_SETS: dict[str, ProblemSet] = {
    s.name: s
    for s in (
        ProblemSet("math500", "test"),
        ProblemSet("aime2024", "train"),
        ProblemSet("aime2025", "train"),
    )
}

_PROBLEM = ("problem", "Problem", "question", "Question")
_ANSWER = ("answer", "Answer")
_SOLUTION = ("solution", "Solution")
_ID = ("unique_id", "id", "ID")


def _first(record: Mapping[str, object], keys: tuple[str, ...]) -> str | None:
    """The first of ``keys`` with a non-empty value, as text (AIME answers may be ints)."""
    for key in keys:
        value = record.get(key)
        if value is not None and not isinstance(value, bool) and str(value).strip():
            return str(value).strip()
    return None


def read_problem(
    record: object, line: int, problem_set: ProblemSet
) -> TeacherProblem | RecordProblem:
    """One record as a teacher problem, or why it cannot be one.

    The answer is the ``answer`` field, else the last ``\\boxed{}`` of the solution; a
    solution that is nothing but that box is no worked solution and is dropped. The pid is
    ``<set>-<id>`` from the record's id field, else ``<set>-<line>``.
    """
    if not isinstance(record, Mapping):
        return RecordProblem(line, None, None, "expected a JSON object")
    ident = _first(record, _ID)
    pid = f"{problem_set.name}-{ident if ident is not None else line}"
    problem = _first(record, _PROBLEM)
    if problem is None:
        return RecordProblem(line, pid, "problem", f"missing (looked for {', '.join(_PROBLEM)})")
    solution = _first(record, _SOLUTION) or ""
    answer = _first(record, _ANSWER) or extract_boxed(solution)
    if not answer:
        return RecordProblem(
            line, pid, "answer", "missing, and the solution has no \\boxed{} answer to read"
        )
    if solution.replace(" ", "") == f"\\boxed{{{answer}}}".replace(" ", ""):
        solution = ""
    return TeacherProblem(pid, problem, answer, solution)


def load_problem_set(name: str, source: str) -> tuple[list[TeacherProblem], list[str]]:
    """The problems of replication set ``name`` from ``source`` (a JSONL path, else a Hub id),
    and a message for every record skipped; a repeated pid keeps the first record."""
    problem_set = PROBLEM_SETS.get(name)
    if problem_set is None:
        raise ValueError(f"unknown problem set {name!r}; choose from {', '.join(PROBLEM_SETS)}")
    found = read_source(source, split=problem_set.split, what=f"{name} problems")
    problems: list[TeacherProblem] = []
    errors = [str(p) for p in found.bad_lines]
    seen: dict[str, int] = {}
    for line, record in found.rows:
        read = read_problem(record, line, problem_set)
        if isinstance(read, RecordProblem):
            errors.append(str(read))
        elif read.pid in seen:
            message = f"duplicate pid (first seen on line {seen[read.pid]}, kept there)"
            errors.append(str(RecordProblem(line, read.pid, "pid", message)))
        else:
            seen[read.pid] = line
            problems.append(read)
    return problems, errors
