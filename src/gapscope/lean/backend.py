"""The interface every Lean backend implements, and the error for "no Lean here"."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from gapscope.lean.verdict import LeanVerdict


class LeanUnavailable(RuntimeError):
    """No Lean toolchain or server is reachable; the message says what to install or start."""


@dataclass(frozen=True)
class CheckRequest:
    """Lean code to check. ``header`` (imports, options) is loaded once per REPL and reused.

    ``required``: qualified names the code must declare to be VALID (e.g. a problem's official
    theorem); a helper lemma that compiles must never stand in for the theorem asked for.
    ``challenge``: the reference statement of those names as the dataset gives them (Lean
    source, proofs ``sorry``), elaborated by the harness alone on ``header``. A required name
    is VALID only if the solution's constant of that name has the challenge's type, so a
    request with ``required`` and no ``challenge`` is never VALID.
    """

    code: str
    header: str = ""
    timeout_s: float = 60.0
    required: tuple[str, ...] = ()
    challenge: str = ""


class LeanBackend(Protocol):
    """Checks Lean code; never raises for a bad proof, only returns a verdict."""

    @property
    def toolchain(self) -> str:
        """The Lean version checked against (part of the verdict cache key)."""
        ...

    def check_many(self, requests: Sequence[CheckRequest]) -> list[LeanVerdict]:
        """Verdicts in request order; concurrency is the backend's business."""
        ...

    def close(self) -> None:
        """Stop processes and connections."""
        ...
