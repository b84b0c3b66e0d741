"""Teacher compilation: turn a problem + answer + solution into a validated milestone family.

The teacher writes the roadmap as JSON; this module parses and validates it, builds the family
in the released format, and runs the leak check. Each rejection names the funnel stage it
failed at, so a compilation run can report how many candidates survived each filter (seed,
Appendix B: candidates -> compiled -> screened).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from gapscope.ladder.families import Family, RecordError, milestone_prompt, parent_prompt
from gapscope.ladder.leak import check_family
from gapscope.ladder.schema import AnswerSchema, MilestoneType
from gapscope.records import RecordProblem, jsonl_rows
from gapscope.templates import Templates

template = Templates(Path(__file__).parent / "prompts")


class Stage(StrEnum):
    """Funnel stages, in order; a family is kept only past the last one."""

    REPLIED = "replied"
    PARSED = "parsed"
    SCHEMA_VALID = "schema_valid"
    STRUCTURED = "structured"
    LEAK_FREE = "leak_free"


FUNNEL: tuple[Stage, ...] = tuple(Stage)


class CompileError(ValueError):
    """A teacher reply that failed ``stage``; the message says what to fix."""

    def __init__(self, stage: Stage, message: str) -> None:
        super().__init__(message)
        self.stage = stage


@dataclass(frozen=True)
class TeacherProblem:
    """One parent problem to compile."""

    pid: str
    problem: str
    answer: str
    solution: str


def load_problems(path: Path) -> tuple[list[TeacherProblem], list[str]]:
    """Problems from JSONL (``problem``, ``answer`` required; ``pid``, ``solution``
    optional); bad lines are reported by number and field and skipped."""
    rows, bad = jsonl_rows(path.read_text(encoding="utf-8"))
    problems: list[TeacherProblem] = []
    errors = [str(p) for p in bad]
    for number, record in rows:
        if not isinstance(record, dict):
            errors.append(str(RecordProblem(number, None, None, "expected a JSON object")))
            continue
        missing = [k for k in ("problem", "answer") if not str(record.get(k, "")).strip()]
        if missing:
            problem = RecordProblem(number, None, ", ".join(missing), "missing")
            errors.append(str(problem))
            continue
        text = str(record["problem"])
        pid = str(record.get("pid") or hashlib.sha1(text.encode()).hexdigest()[:12])
        problems.append(
            TeacherProblem(pid, text, str(record["answer"]), str(record.get("solution", "")))
        )
    return problems, errors


def teacher_prompt(problem: TeacherProblem) -> str:
    """The compilation request for one problem."""
    return template("teacher").format(
        problem=problem.problem,
        answer=problem.answer,
        solution=problem.solution or "(none given)",
    )


def retry_prompt(error: CompileError) -> str:
    """The follow-up asking the teacher to regenerate after a rejection."""
    return template("teacher_retry").format(reason=f"[{error.stage.value}] {error}")


_FENCE = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)


def parse_reply(text: str) -> dict[str, Any]:
    """The JSON object of a teacher reply: a fenced block, else the outermost braces."""
    if not text.strip():
        raise CompileError(Stage.REPLIED, "the reply is empty")
    candidates = [m.group(1) for m in _FENCE.finditer(text)]
    start, end = text.find("{"), text.rfind("}")
    if start != -1 and end > start:
        candidates.append(text[start : end + 1])
    for candidate in reversed(candidates):
        try:
            parsed = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(parsed, dict):
            return parsed
    raise CompileError(Stage.PARSED, "no JSON object found in the reply")


def _milestone(index: int, raw: object, problem: str) -> dict[str, Any]:
    where = f"milestone {index + 1}"
    if not isinstance(raw, dict):
        raise CompileError(Stage.SCHEMA_VALID, f"{where} is not a JSON object")
    fields = {k: str(raw.get(k, "")).strip() for k in ("schema", "type", "description")}
    fields |= {k: str(raw.get(k, "")).strip() for k in ("instruction", "answer")}
    for key, value in fields.items():
        if not value:
            raise CompileError(Stage.SCHEMA_VALID, f"{where}: field '{key}' is empty")
    if fields["schema"].upper() not in AnswerSchema.__members__:
        raise CompileError(
            Stage.SCHEMA_VALID,
            f"{where}: schema {fields['schema']!r} is not one of {', '.join(AnswerSchema)}",
        )
    if fields["type"].upper() not in MilestoneType.__members__:
        raise CompileError(
            Stage.SCHEMA_VALID,
            f"{where}: type {fields['type']!r} is not one of {', '.join(MilestoneType)}",
        )
    return {
        "prompt": milestone_prompt(problem, fields["description"], fields["instruction"]),
        "answer": fields["answer"],
        "note": "ACCEPT IF equivalent final answer is present.",
        "type": fields["type"].upper(),
        "schema": fields["schema"].upper(),
        "description": fields["description"],
        "instruction": fields["instruction"],
    }


def build_family(problem: TeacherProblem, reply: dict[str, Any]) -> Family:
    """Validate a parsed reply and build its family, or raise :class:`CompileError`."""
    raw = reply.get("milestones")
    if not isinstance(raw, list) or not raw:
        raise CompileError(Stage.SCHEMA_VALID, "'milestones' must be a non-empty list")
    milestones = [_milestone(i, m, problem.problem) for i, m in enumerate(raw)]
    types = [m["type"] for m in milestones]
    if types.count(MilestoneType.INTEGRATE.value) != 1 or types[-1] != MilestoneType.INTEGRATE:
        raise CompileError(Stage.STRUCTURED, "exactly one INTEGRATE milestone, placed last")
    if len(milestones) - 1 < 2:
        raise CompileError(Stage.STRUCTURED, "at least two milestones before INTEGRATE")
    record = {
        "pid": problem.pid,
        "parent_prompt": parent_prompt(problem.problem),
        "parent_answer": problem.answer,
        "parent_note": "ACCEPT IF equivalent final answer is present.",
        "reference_solution": problem.solution or None,
        "milestones": milestones,
    }
    try:
        family = Family.from_dict(record)
    except RecordError as exc:
        raise CompileError(Stage.SCHEMA_VALID, str(exc)) from None
    flags = check_family(family)
    if flags:
        detail = "; ".join(f"milestone {f.milestone_index + 1}: {f.detail}" for f in flags)
        raise CompileError(Stage.LEAK_FREE, f"milestone answers leak the parent answer ({detail})")
    return family


def funnel_counts(stages_reached: Iterable[Stage | None]) -> dict[str, int]:
    """How many candidates got past each stage; ``None`` marks a kept family."""
    reached = list(stages_reached)
    counts = {"candidates": len(reached)}
    for i, stage in enumerate(FUNNEL):
        counts[stage.value] = sum(r is None or FUNNEL.index(r) > i for r in reached)
    counts["kept"] = counts[FUNNEL[-1].value]
    return counts
