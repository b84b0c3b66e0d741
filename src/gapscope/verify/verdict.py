"""The one verdict type of the math verifier.

A verdict is a label plus *why* (the reason), *where* (the cascade stage that decided) and *from
what* (the extraction stage that found the answer in the response), so an audit can tell a parse
failure from a genuine mismatch, or an unboxed answer from a boxed one, without re-running.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Label = Literal["ACCEPT", "NOT_ACCEPT"]

# Bump whenever a change can alter a verdict: it is part of every on-disk cache key.
VERIFIER_VERSION = "5"

NO_BOXED = "no_boxed"  # no answer found at all (the name predates unboxed extraction)
STRING_MATCH = "string_match"
NUMERIC_MATCH = "numeric_match"
SYMBOLIC_MATCH = "symbolic_match"
MATH_VERIFY_MATCH = "math_verify_match"
MISMATCH = "mismatch"
# The final boxes (or math spans) name different answers (``\\boxed{1} or \\boxed{2}``,
# ``$1$ or $2$``): no answer was chosen.
HEDGED = "hedged"
PARSE_ERROR = "parse_error"
# The check ran out of its budget: wall clock, recursion depth or memory. All three mean the
# same thing to a caller: the answer was too expensive to judge, so it is not accepted.
TIMEOUT = "timeout"
# The input exceeds a bound (see ``limits``): too long, too deep, or a value too large to build.
TOO_LARGE = "too_large"
TOO_COMPLEX = "too_complex"
# The check failed in a way no rule anticipated; the pair is not accepted, the run goes on.
INTERNAL_ERROR = "internal_error"


@dataclass(frozen=True, slots=True)
class Verdict:
    """ACCEPT or NOT_ACCEPT, the reason, the cascade stage that decided, and where the answer
    was found (``extract.BOXED`` ... ``extract.BARE``, or ``"none"``)."""

    label: Label
    reason: str
    stage: str
    extraction: str = "boxed"

    @property
    def accepted(self) -> bool:
        """True when the label is ACCEPT (the flexible extraction)."""
        return self.label == "ACCEPT"

    @property
    def strict(self) -> bool:
        """Accepted with the answer in a box: what a boxed-answer-only grader would say."""
        return self.accepted and self.extraction in ("boxed", "boxes")  # extract.BOXED/BOXES


def accept(reason: str, stage: str, extraction: str = "boxed") -> Verdict:
    """An ACCEPT verdict."""
    return Verdict("ACCEPT", reason, stage, extraction)


def reject(reason: str, stage: str, extraction: str = "boxed") -> Verdict:
    """A NOT_ACCEPT verdict."""
    return Verdict("NOT_ACCEPT", reason, stage, extraction)
