"""What the whole-proof task writes into its log, declared once for the task and its reader
(:mod:`gapscope.analysis.prove`): a renamed key is then a type error on both sides."""

from __future__ import annotations

from typing import Any, TypedDict

from gapscope.models import SteeringRecord

TASK = "prove"


class ProblemMetadata(TypedDict):
    """One sample: a miniF2F-style problem (its statement and the header it needs)."""

    name: str
    split: str
    header: str
    formal_statement: str


class AttemptMetadata(TypedDict):
    """One attempt's score metadata: its coherence class, extraction status and Lean verdict."""

    coherence: str
    extraction: str
    verdict: dict[str, Any] | None


class RunMetadata(TypedDict):
    """The log's task metadata: what was run, the k values, the problems, the steering."""

    dataset: str
    subset: str
    split: str
    n: int
    k: list[int]
    problems: list[str]
    load_problems: list[str]
    steer: str | None
    alpha: float
    steering: SteeringRecord | None
