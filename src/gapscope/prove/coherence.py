"""Coherence classes of a proof attempt (seed, Figure 5): did the model write Lean at all?

The seed measures output coherence as the share of attempts that are well-formed Lean 4 -
proven, or syntactically valid but unproven - against syntax errors and empty extractions,
so that a drop in solve rate can be told apart from garbled generations. Precisely:

- ``proven``: Lean accepted the proof (status VALID).
- ``unproven``: well-formed but unproven. Lean parsed and elaborated the declaration, the
  proof failed: status SORRY, TIMEOUT, or LEAN_ERROR whose errors are all proof failures
  (unsolved goals, a tactic failed, type mismatch inside a tactic, ...).
- ``malformed``: a parse or elaboration error - LEAN_ERROR with at least one error message
  matching :data:`MALFORMED_PATTERNS` (syntax errors, unknown identifiers/constants/tactics,
  hallucinated fields). One such error is enough: the code is not well-formed Lean.
- ``empty``: nothing was extracted from the reply.
- ``changed``: the code never states the problem's theorem (see ``extract``), or Lean
  accepted a file that does not declare it (MISSING_DECLARATION); it is not a candidate proof,
  so it is not coherent either.
- ``forbidden``: the code holds a command a proof never needs (``#eval``, ``macro``, ...; see
  ``gapscope.lean.screen``) and was not checked.
- ``unsettled``: the check failed without a verdict, and it was the code's doing: the REPL
  accepted the code, then the acceptance replay or the kernel check failed (comparator killed,
  a build it ran failed), or the REPL failed on the code and answered a control right after
  (see :func:`gapscope.lean.verdict.broken_by_code` and :mod:`gapscope.lean.base`). The model's
  code can cause that (a build or elaboration that exhausts memory, a crash), so these count
  as failures: coherent, in every fraction.
- ``server_error``: the checker failed and failed the control too (the machine, not the
  code); nothing is known, so these attempts are reported separately and left out of every
  fraction and of pass@k.

An error message that matches no pattern counts as a proof failure: tactic failures are an
open-ended family ("linarith failed", "omega could not prove the goal", "simp made no
progress", ...), while parse and name-resolution errors are a small, stable set.
"""

from __future__ import annotations

import re
from enum import StrEnum

from gapscope.lean import LeanVerdict, Status, broken_by_code
from gapscope.prove.extract import ExtractionStatus


class Coherence(StrEnum):
    """The class of one attempt; the order is the report's column order."""

    PROVEN = "proven"
    UNPROVEN = "unproven"
    MALFORMED = "malformed"
    EMPTY = "empty"
    CHANGED = "changed"
    FORBIDDEN = "forbidden"
    UNSETTLED = "unsettled"
    SERVER_ERROR = "server_error"


COHERENT: frozenset[Coherence] = frozenset(
    {Coherence.PROVEN, Coherence.UNPROVEN, Coherence.UNSETTLED}
)

MALFORMED_PATTERNS: tuple[str, ...] = (
    r"^unexpected (token|identifier|end of input)",
    r"^expected ",
    r"^type expected",
    r"^unterminated ",
    r"^missing end of",
    r"^invalid 'import' command",
    r"^unknown (identifier|constant|tactic|namespace|attribute|option|universe)",
    r"^invalid field( notation)?\b",
    r"^invalid dotted identifier",
    r"^elaboration function for .* has not been implemented",
)
"""Regexes (case-insensitive, searched at the start of an error message) of parse and
elaboration errors. Lean writes some of them capitalised in newer releases ("Unknown
identifier"), hence the case folding."""

_MALFORMED = re.compile("|".join(f"(?:{p})" for p in MALFORMED_PATTERNS), re.IGNORECASE)


def is_malformed_message(text: str) -> bool:
    """Whether one Lean error message is a parse or elaboration error."""
    return _MALFORMED.search(text.lstrip()) is not None


def classify(extraction: ExtractionStatus, verdict: LeanVerdict | None) -> Coherence:
    """The class of an attempt from its extraction and, when it was checked, Lean's verdict."""
    if extraction is ExtractionStatus.EMPTY:
        return Coherence.EMPTY
    if extraction is ExtractionStatus.CHANGED:
        return Coherence.CHANGED
    if verdict is None:
        raise ValueError(f"an attempt extracted as {extraction.value!r} must have a verdict")
    if verdict.status is Status.VALID:
        return Coherence.PROVEN
    if broken_by_code(verdict):
        return Coherence.UNSETTLED
    if verdict.status is Status.SERVER_ERROR:
        return Coherence.SERVER_ERROR
    if verdict.status is Status.MISSING_DECLARATION:
        return Coherence.CHANGED
    if verdict.status is Status.FORBIDDEN:
        return Coherence.FORBIDDEN
    if verdict.status is Status.LEAN_ERROR and any(
        m.severity == "error" and is_malformed_message(m.data) for m in verdict.messages
    ):
        return Coherence.MALFORMED
    return Coherence.UNPROVEN
