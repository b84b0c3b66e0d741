"""Milestone families: the records OracleLadder probes, how they are validated and loaded.

A family is a parent problem with its gold answer and a fixed roadmap of milestones, each with a
standalone prompt and a gold answer (seed Section 2). The record shape is the released one
(``diagnostic_354_families.jsonl``), so the released set, the Hub copy of it and our bundled
set all load through the same code; optional fields that the release lacks (answer schemas,
reference solutions, explicit descriptions) are filled in by teachers that know them.

Loading never stops at a bad record: each bad record is skipped and every one of its faults is
reported with its line and pid, so one typo costs one family, not the run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

from gapscope.ladder.schema import AnswerSchema, MilestoneType
from gapscope.records import RecordProblem, jsonl_rows, read_source

PROMPT_HEAD = (
    "You are solving one milestone from a larger problem.\n"
    "Keep your response focused on this milestone only.\n\n"
    "Original problem (context):\n"
)
_DESCRIPTION_MARK = "\n\nMilestone:\n"
_INSTRUCTION_MARK = "\n\nOutput instruction: "


class FamiliesVersion(StrEnum):
    """Which state of a released families file to grade and count against.

    The authors' release keeps every original gold (the paper's counts were graded against
    them) and adds post-publication corrections beside them: ``parent_answer_corrected`` for
    ten parent answers and ``milestone_gold_invalid`` for three milestone golds of family
    a0759695 (``data/corrections.jsonl``). The two versions differ in the numbers they give:
    on the released panel, dropping a0759695's invalid milestones moves the 16K anchor
    Kendall from +0.800 to +0.817 and Qwen3-8B's composition gap from 171 (48.3%) to 172
    (48.6%) of 354 families, outside the paper's 33-48% range.
    """

    CORRECTED = "corrected"
    """The default: corrections applied (a correct answer is never graded against a known-wrong
    gold). New runs of the diagnostic should use it."""
    PUBLISHED = "published"
    """Paper mode: corrections ignored, the files as the paper graded them; it reproduces the
    published numbers from the released panel (and equals the release's first commit)."""


def at_version(families: Iterable[Family], version: FamiliesVersion) -> list[Family]:
    """``families`` as ``version`` reads them (corrections kept or dropped)."""
    if version is FamiliesVersion.PUBLISHED:
        return [f.as_published() for f in families]
    return list(families)


PARENT_HEAD = "Solve the following problem. Provide your final answer clearly.\n\nProblem:\n"


def milestone_prompt(problem: str, description: str, instruction: str) -> str:
    """The standalone prompt of a milestone, in the released format."""
    return (
        f"{PROMPT_HEAD}{problem}{_DESCRIPTION_MARK}{description}{_INSTRUCTION_MARK}{instruction}\n"
    )


def parent_prompt(problem: str) -> str:
    """The parent prompt of a family, in the released format."""
    return f"{PARENT_HEAD}{problem}\n"


def split_milestone_prompt(prompt: str) -> tuple[str, str] | None:
    """``(description, instruction)`` read back from a released-format prompt, else None.

    The released records carry no separate description: the roadmap text sits between
    "Milestone:" and "Output instruction:". Both marks are searched from the right because
    the parent problem quoted before them is longer and freer text than the description.
    """
    at_instruction = prompt.rfind(_INSTRUCTION_MARK)
    if at_instruction < 0:
        return None
    at_description = prompt.rfind(_DESCRIPTION_MARK, 0, at_instruction)
    if at_description < 0:
        return None
    description = prompt[at_description + len(_DESCRIPTION_MARK) : at_instruction].strip()
    instruction = prompt[at_instruction + len(_INSTRUCTION_MARK) :].strip()
    if not description or not instruction:
        return None
    return description, instruction


@dataclass(frozen=True)
class Milestone:
    """One roadmap step: a standalone prompt, its gold answer and the teacher's labels.

    ``description`` is the sub-goal as the roadmap shows it; ``instruction`` is the
    "Output instruction:" line. ``schema`` stays None when the record has none: the verifier
    infers it from the gold answer rather than this layer guessing.
    """

    prompt: str
    answer: str
    type: MilestoneType
    description: str
    instruction: str | None = None
    note: str | None = None
    schema: AnswerSchema | None = None
    pre_train_phat: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSONL shape; description and instruction are written only when the prompt
        does not already say them, so a released record comes back unchanged."""
        out: dict[str, Any] = {"prompt": self.prompt, "answer": self.answer}
        if self.note is not None:
            out["note"] = self.note
        out["type"] = self.type.value
        if self.schema is not None:
            out["schema"] = self.schema.value
        if self.pre_train_phat is not None:
            out["pre_train_phat"] = self.pre_train_phat
        if split_milestone_prompt(self.prompt) != (self.description, self.instruction):
            out["description"] = self.description
            if self.instruction is not None:
                out["instruction"] = self.instruction
        return out


@dataclass(frozen=True)
class Family:
    """A parent problem, its gold answer(s) and its roadmap.

    Corrections follow the release: the original ``parent_answer`` stays (the paper graded
    against it) and ``parent_answer_corrected`` overrides it in ``gold_answer``;
    ``milestone_gold_invalid`` holds 0-based indices of milestones whose gold is wrong.
    """

    pid: str
    parent_prompt: str
    parent_answer: str
    milestones: tuple[Milestone, ...]
    parent_note: str | None = None
    parent_schema: AnswerSchema | None = None
    reference_solution: str | None = None
    parent_answer_corrected: str | None = None
    correction_note: str | None = None
    milestone_gold_invalid: tuple[int, ...] = ()

    @property
    def gold_answer(self) -> str:
        """The answer to grade the parent against: the correction when there is one."""
        if self.parent_answer_corrected is not None:
            return self.parent_answer_corrected
        return self.parent_answer

    @property
    def tested_indices(self) -> tuple[int, ...]:
        """Indices (into ``milestones``) of the milestones probes and Stage 0 may use.

        INTEGRATE milestones are withheld because their answer is essentially the parent
        answer (seed Section 2). Milestones listed in ``milestone_gold_invalid`` are withheld
        too: grading against a known-wrong gold would turn correct work into failures, and
        the release marks them invalid instead of supplying a fix.
        """
        invalid = set(self.milestone_gold_invalid)
        return tuple(
            i
            for i, m in enumerate(self.milestones)
            if m.type is not MilestoneType.INTEGRATE and i not in invalid
        )

    @property
    def tested_milestones(self) -> tuple[Milestone, ...]:
        """The milestones at ``tested_indices``, in roadmap order."""
        return tuple(self.milestones[i] for i in self.tested_indices)

    def to_dict(self) -> dict[str, Any]:
        """The JSONL shape; absent optional fields are left out, as in the release."""
        out: dict[str, Any] = {
            "pid": self.pid,
            "parent_prompt": self.parent_prompt,
            "parent_answer": self.parent_answer,
        }
        optional_head: dict[str, Any] = {
            "parent_note": self.parent_note,
            "parent_schema": self.parent_schema.value if self.parent_schema else None,
            "reference_solution": self.reference_solution,
        }
        out.update({k: v for k, v in optional_head.items() if v is not None})
        out["milestones"] = [m.to_dict() for m in self.milestones]
        if self.parent_answer_corrected is not None:
            out["parent_answer_corrected"] = self.parent_answer_corrected
        if self.correction_note is not None:
            out["correction_note"] = self.correction_note
        if self.milestone_gold_invalid:
            out["milestone_gold_invalid"] = list(self.milestone_gold_invalid)
        return out

    def as_published(self) -> Family:
        """This family as the paper graded it: the original parent answer and every
        milestone tested, the post-publication corrections dropped (see ``FamiliesVersion``)."""
        return replace(
            self, parent_answer_corrected=None, correction_note=None, milestone_gold_invalid=()
        )

    @classmethod
    def from_dict(cls, record: object) -> Family:
        """Validate one record; raises ``RecordError`` listing every bad field."""
        return _read_family(_Fields(record))


@dataclass(frozen=True)
class LoadResult:
    """The families that validated and a problem for every fault in the ones that did not."""

    families: list[Family]
    problems: list[RecordProblem]


class RecordError(ValueError):
    """A record with one or more bad fields; ``faults`` pairs each field with its message."""

    def __init__(self, faults: list[tuple[str, str]]) -> None:
        super().__init__("; ".join(f"{field}: {message}" for field, message in faults))
        self.faults = faults


_E = TypeVar("_E", bound=StrEnum)


class _Fields:
    """Reads typed fields from one record and collects every fault instead of stopping.

    A JSON ``null`` counts as absent because Hub datasets fill columns a row lacks with None.
    """

    def __init__(self, record: object, prefix: str = "") -> None:
        self.prefix = prefix
        self.faults: list[tuple[str, str]] = []
        self.is_object = isinstance(record, Mapping)
        if isinstance(record, Mapping):
            self.record: Mapping[str, Any] = record
        else:
            self.record = {}
            self.fault("", f"expected a JSON object, got {type(record).__name__}")

    def fault(self, key: str, message: str) -> None:
        name = f"{self.prefix}{key}" if key else self.prefix.rstrip(".") or "record"
        self.faults.append((name, message))

    def text(self, key: str, *, required: bool = True) -> str | None:
        value = self.record.get(key)
        if value is None:
            if required:
                self.fault(key, "missing")
            return None
        if not isinstance(value, str) or (required and not value.strip()):
            self.fault(key, f"expected a non-empty string, got {value!r:.60}")
            return None
        return value

    def choice(self, key: str, enum: type[_E], *, required: bool) -> _E | None:
        value = self.record.get(key)
        if value is None:
            if required:
                self.fault(key, "missing")
            return None
        try:
            return enum(value)
        except ValueError:
            allowed = ", ".join(member.value for member in enum)
            self.fault(key, f"unknown {enum.__name__} {value!r:.60} (expected one of {allowed})")
            return None

    def probability(self, key: str) -> float | None:
        value = self.record.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            self.fault(key, f"expected a number in [0, 1], got {value!r:.60}")
            return None
        return float(value)

    def unknown_keys(self, known: frozenset[str]) -> None:
        """Unknown keys are faults: a misspelt optional field would otherwise vanish."""
        for key in sorted(set(self.record) - known):
            if self.record[key] is not None:
                self.fault(key, "unknown field")


_FAMILY_KEYS = frozenset(
    {
        "pid",
        "parent_prompt",
        "parent_answer",
        "parent_note",
        "parent_schema",
        "reference_solution",
        "milestones",
        "parent_answer_corrected",
        "correction_note",
        "milestone_gold_invalid",
    }
)
_MILESTONE_KEYS = frozenset(
    {
        "prompt",
        "answer",
        "note",
        "type",
        "schema",
        "pre_train_phat",
        "description",
        "instruction",
    }
)


def _read_milestone(fields: _Fields) -> Milestone | None:
    if not fields.is_object:
        return None
    fields.unknown_keys(_MILESTONE_KEYS)
    prompt = fields.text("prompt")
    answer = fields.text("answer")
    kind = fields.choice("type", MilestoneType, required=True)
    schema = fields.choice("schema", AnswerSchema, required=False)
    note = fields.text("note", required=False)
    phat = fields.probability("pre_train_phat")
    description = fields.text("description", required=False)
    instruction = fields.text("instruction", required=False)
    if prompt is not None and (description is None or instruction is None):
        parts = split_milestone_prompt(prompt)
        if parts is not None:
            description = description if description is not None else parts[0]
            instruction = instruction if instruction is not None else parts[1]
    if prompt is not None and description is None:
        fields.fault(
            "description",
            "missing, and the prompt has no 'Milestone:' ... 'Output instruction:' part to read"
            " it from",
        )
    if prompt is None or answer is None or kind is None or description is None:
        return None
    return Milestone(
        prompt=prompt,
        answer=answer,
        type=kind,
        description=description,
        instruction=instruction,
        note=note,
        schema=schema,
        pre_train_phat=phat,
    )


def _read_milestones(fields: _Fields) -> tuple[Milestone, ...] | None:
    value = fields.record.get("milestones")
    if not isinstance(value, list) or not value:
        fields.fault("milestones", f"expected a non-empty list, got {value!r:.60}")
        return None
    milestones: list[Milestone] = []
    for i, item in enumerate(value):
        sub = _Fields(item, prefix=f"milestones[{i}].")
        milestone = _read_milestone(sub)
        fields.faults.extend(sub.faults)
        if milestone is not None:
            milestones.append(milestone)
    return tuple(milestones) if len(milestones) == len(value) else None


def _read_invalid(fields: _Fields, n_milestones: int | None) -> tuple[int, ...]:
    value = fields.record.get("milestone_gold_invalid")
    if value is None:
        return ()
    if not isinstance(value, list):
        fields.fault("milestone_gold_invalid", f"expected a list of indices, got {value!r:.60}")
        return ()
    for i, index in enumerate(value):
        ok = isinstance(index, int) and not isinstance(index, bool) and index >= 0
        if ok and n_milestones is not None and index >= n_milestones:
            ok = False
        if not ok:
            fields.fault(
                f"milestone_gold_invalid[{i}]",
                f"expected a 0-based milestone index below {n_milestones}, got {index!r:.60}",
            )
    return tuple(value)


def _read_family(fields: _Fields) -> Family:
    if not fields.is_object:
        raise RecordError(fields.faults)
    fields.unknown_keys(_FAMILY_KEYS)
    pid = fields.text("pid")
    prompt = fields.text("parent_prompt")
    answer = fields.text("parent_answer")
    note = fields.text("parent_note", required=False)
    schema = fields.choice("parent_schema", AnswerSchema, required=False)
    solution = fields.text("reference_solution", required=False)
    corrected = fields.text("parent_answer_corrected", required=False)
    correction_note = fields.text("correction_note", required=False)
    milestones = _read_milestones(fields)
    invalid = _read_invalid(fields, len(milestones) if milestones is not None else None)
    if fields.faults or pid is None or prompt is None or answer is None or milestones is None:
        raise RecordError(fields.faults)
    return Family(
        pid=pid,
        parent_prompt=prompt,
        parent_answer=answer,
        milestones=milestones,
        parent_note=note,
        parent_schema=schema,
        reference_solution=solution,
        parent_answer_corrected=corrected,
        correction_note=correction_note,
        milestone_gold_invalid=invalid,
    )


def _pid_of(record: object) -> str | None:
    pid = record.get("pid") if isinstance(record, Mapping) else None
    return pid if isinstance(pid, str) and pid else None


def read_records(rows: Iterable[tuple[int, object]]) -> LoadResult:
    """Validate numbered records; skip bad ones and duplicate pids (the first one is kept)."""
    families: list[Family] = []
    problems: list[RecordProblem] = []
    first_line: dict[str, int] = {}
    for line, record in rows:
        pid = _pid_of(record)
        try:
            family = Family.from_dict(record)
        except RecordError as err:
            problems.extend(RecordProblem(line, pid, f, message) for f, message in err.faults)
            continue
        if family.pid in first_line:
            message = f"duplicate pid (first seen on line {first_line[family.pid]}, kept there)"
            problems.append(RecordProblem(line, family.pid, "pid", message))
            continue
        first_line[family.pid] = line
        families.append(family)
    return LoadResult(families=families, problems=problems)


def parse_jsonl(text: str) -> LoadResult:
    """Families from JSONL text; a line that is not JSON is a problem, blank lines are not."""
    rows, bad = jsonl_rows(text)
    result = read_records(rows)
    problems = sorted([*bad, *result.problems], key=lambda p: p.line)
    return LoadResult(families=result.families, problems=problems)


def load_families(
    source: str | Path,
    *,
    split: str = "train",
    version: FamiliesVersion = FamiliesVersion.CORRECTED,
) -> LoadResult:
    """Families from a local JSONL file or, when no such path exists, a Hub dataset id.

    Local first (the house rule is offline first); the Hub is tried only for a string shaped
    like ``owner/name`` that names no local path. ``split`` applies to Hub datasets only;
    ``version`` says whether the records' post-publication corrections apply.
    """
    found = read_source(source, split=split, what="families")
    result = read_records(found.rows)
    problems = sorted([*found.bad_lines, *result.problems], key=lambda p: p.line)
    return LoadResult(families=at_version(result.families, version), problems=problems)


def load_bundled() -> LoadResult:
    """The family set shipped with gapscope (our own problems; see ``ladder/data``)."""
    text = resources.files("gapscope.ladder").joinpath("data/families.jsonl").read_text("utf-8")
    return parse_jsonl(text)
