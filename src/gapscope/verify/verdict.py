"""The one verdict type of the math verifier.

A verdict is a label plus *why* (the reason) and *where* (the cascade stage that decided), so an
audit can tell a parse failure from a genuine mismatch without re-running anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Label = Literal["ACCEPT", "NOT_ACCEPT"]

NO_BOXED = "no_boxed"
STRING_MATCH = "string_match"
NUMERIC_MATCH = "numeric_match"
SYMBOLIC_MATCH = "symbolic_match"
MATH_VERIFY_MATCH = "math_verify_match"
MISMATCH = "mismatch"
PARSE_ERROR = "parse_error"
# The check ran out of its budget: wall clock, recursion depth or memory. All three mean the
# same thing to a caller: the answer was too expensive to judge, so it is not accepted.
TIMEOUT = "timeout"


@dataclass(frozen=True, slots=True)
class Verdict:
    """ACCEPT or NOT_ACCEPT, the reason, and the cascade stage that decided."""

    label: Label
    reason: str
    stage: str

    @property
    def accepted(self) -> bool:
        """True when the label is ACCEPT."""
        return self.label == "ACCEPT"


def accept(reason: str, stage: str) -> Verdict:
    """An ACCEPT verdict."""
    return Verdict("ACCEPT", reason, stage)


def reject(reason: str, stage: str) -> Verdict:
    """A NOT_ACCEPT verdict."""
    return Verdict("NOT_ACCEPT", reason, stage)
