"""What the O-NNG task writes into its log, declared once for the task and its reader
(:mod:`gapscope.analysis.onng`): a renamed key is then a type error on both sides."""

from __future__ import annotations

from typing import TypedDict

TASK = "onng"


class ProblemMetadata(TypedDict):
    """One sample: a problem of the set under one obfuscation (lambda, renaming seed)."""

    problem: str
    module: str
    index: int
    lam: float
    seed: int


class AttemptRecord(TypedDict, total=False):
    """The solver's record of one attempt (store ``onng``; the score's metadata): how the reply
    parsed, the Lean verdict, and the latency the paper's ANOVA is over."""

    parse_status: str
    draft: str
    code: str
    inference_s: float
    output_tokens: int | None
    status: str | None
    detail: str
    messages: list[str]
    check_s: float
    checker: str  # which check settled the verdict (gapscope.lean.verdict.Checker)
    checks: list[str]  # every check that ran (repl-text, kernel:comparator)
    selftest: bool | None  # whether that path passed its known-answer self-test
    sandboxed: bool | None
    bounds: str | None  # the limits that held the checking process (docs/lean.md)
