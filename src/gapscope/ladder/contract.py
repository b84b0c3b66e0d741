"""What OracleLadder's tasks write into their logs, declared once for the task and its reader.

The task builds these dictionaries and :mod:`gapscope.analysis.ladder` reads them back; both
name the keys through these types, so a renamed key is a type error on both sides instead of a
``KeyError`` in someone's report.
"""

from __future__ import annotations

from typing import Any, TypedDict

TASK = "oracle_ladder"
COMPILE_TASK = "ladder_compile"


class ProbeMetadata(TypedDict):
    """One probe sample: its family, condition, milestone and the controls' donors."""

    pid: str
    condition: str
    milestone_index: int | None
    schema: str | None
    donors: list[str]


class RunMetadata(TypedDict):
    """The log's task metadata: the family set and how many milestones each family tests."""

    families: str
    families_version: str
    """``corrected`` or ``published``: whether the release's corrections were applied."""
    verifier: str
    """``gapscope`` or ``authors``: the grader of every rollout."""
    n_families: int
    load_problems: list[str]
    tested_milestones: dict[str, int]
    expected_reply_tokens: int
    """What a plan expects one rollout to cost (``task.EXPECTED_REPLY_SHARE`` of the cap): an
    assumption for the time estimate, not a measurement of this run."""


class VerdictMetadata(TypedDict):
    """One rollout's grade: the verifier's reason and the cascade stage that decided it."""

    reason: str
    stage: str


class CompileStore(TypedDict, total=False):
    """A teacher-compilation sample's store: the kept family, or every rejected attempt."""

    family: dict[str, Any]
    failures: list[dict[str, Any]]


REVIEW_TASK = "ladder_review"


class ReviewCaseMetadata(TypedDict):
    """One review sample: the student whose composition-gap family it is, and the family."""

    model: str
    pid: str


class ReviewTotals(TypedDict):
    """A reviewed student's denominators: its families, its composition-gap count, its log."""

    n_families: int
    composition: int
    log: str


class ReviewRunMetadata(TypedDict):
    """The review log's task metadata: the cases file and every reviewed student's totals."""

    cases: str
    models: dict[str, ReviewTotals]


class ReviewVerdictMetadata(TypedDict):
    """One judge verdict: every flagged category (priority order) and the resulting label;
    ``label`` is None and ``error`` says why when the reply could not be read."""

    flags: list[str]
    label: str | None
    error: str | None


CODE_TASK = "ladder_code"
HARD100_TASK = "ladder_math_hard100"
"""The MATH hard-100 comparator (``hard100_task``): one sample per problem, k epochs."""


class CodeProbeMetadata(TypedDict):
    """One code-pilot sample: the problem and the help condition."""

    pid: str
    condition: str


class CodeRunMetadata(TypedDict):
    """The code pilot's task metadata: the problem set, what was skipped, the isolation."""

    problems: str
    n_problems: int
    load_problems: list[str]
    isolation: str
    sandboxed: bool
    limits: dict[str, Any]


class CodeVerdictMetadata(TypedDict):
    """One attempt's test run: how it ended, tests passed of total, where it ran (and whether
    that was a sandbox: False only when the user allowed unsandboxed runs), seconds, and
    which limits held it and how (per attempt in a cgroup, or per process only)."""

    status: str
    passed: int
    total: int
    isolation: str
    sandboxed: bool
    seconds: float
    bounds: str
