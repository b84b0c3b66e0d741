"""Typed Lean verdicts: the one result type every Lean backend returns."""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

STANDARD_AXIOMS: frozenset[str] = frozenset({"propext", "Classical.choice", "Quot.sound"})


class Status(StrEnum):
    """What a check established.

    VALID: elaborated with no error, no sorry, only standard axioms. SORRY: elaborated but
    relies on ``sorry`` (or on a non-standard axiom). LEAN_ERROR: Lean reported an error.
    TIMEOUT: the wall-clock limit passed (the process was killed). SERVER_ERROR: the backend
    failed (crash, malformed reply, unreachable server) - nothing is known about the proof.
    MISSING_DECLARATION: Lean accepted the code, but it does not declare a name the check
    required (the problem's official theorem), so what it proves is not the problem.
    FORBIDDEN: the model's code holds a command a proof never needs (``#eval``, ``macro``,
    ``set_option debug...``; see ``gapscope.lean.screen``) and was not sent to Lean at all.
    UNVERIFIED: Lean accepted the code and every text-level rule held, but nothing outside the
    model's own environment could confirm the official theorem (a kimina server cannot replay
    the solution elsewhere): not a proof, see docs/lean.md.
    """

    VALID = "valid"
    SORRY = "sorry"
    LEAN_ERROR = "lean_error"
    TIMEOUT = "timeout"
    SERVER_ERROR = "server_error"
    MISSING_DECLARATION = "missing_declaration"
    FORBIDDEN = "forbidden_command"
    UNVERIFIED = "unverified"


class Checker(StrEnum):
    """Which check settled a verdict, so that a report can say how far a VALID can be trusted.

    COMPARATOR: leanprover/comparator, out of the model's environment, compared the solution's
    exported constants with the challenge's (constructors, recursors, kinds and universe
    parameters included), checked the axioms and replayed the solution into the kernel.
    REPL_TEXT: the REPL's own replies, read as text - the solution's environment pickled and
    unpickled (at the pinned REPL this restores constants *without* kernel checking, see
    docs/lean.md) and the official name's printed signature compared there. SAFEVERIFY and
    GAPSCOPE are kept only so that verdicts recorded before they were retired still load.
    NONE: no checker was consulted (the screen refused the code, or the backend failed).
    """

    COMPARATOR = "comparator"
    SAFEVERIFY = "safeverify"
    GAPSCOPE = "gapscope"
    REPL_TEXT = "repl-text"
    NONE = ""


@dataclass(frozen=True)
class LeanMessage:
    """One message of Lean's, positions as the REPL reports them (line 1-based, column 0-based)."""

    severity: str
    data: str
    line: int | None = None
    column: int | None = None
    end_line: int | None = None
    end_column: int | None = None


@dataclass(frozen=True)
class LeanVerdict:
    """The outcome of checking one piece of Lean code.

    ``checker``: what settled it (:class:`Checker`). ``checks``: every check that ran on the
    way (``repl-text``, ``kernel:comparator``, ...), in order. ``selftest``: whether the path
    that decided it passed its known-answer self-test on this installation (None where the
    backend cannot run one: a kimina server; False only when the user allowed an untested
    path). ``sandboxed``: whether the model's code ran inside the sandbox (None where the
    backend does not know: a kimina server sandboxes on its side); False only when the user
    explicitly allowed unsandboxed checking. ``bounds``: the limits that held the process
    that checked it, with all it started (``gapscope.lean.bounding``; None where gapscope did
    not start it).
    """

    status: Status
    messages: tuple[LeanMessage, ...] = ()
    elapsed_s: float = 0.0
    axioms: tuple[str, ...] | None = None
    detail: str = ""
    checker: Checker = Checker.NONE
    sandboxed: bool | None = None
    checks: tuple[str, ...] = ()
    selftest: bool | None = None
    bounds: str | None = None

    @property
    def valid(self) -> bool:
        return self.status is Status.VALID


REPLAY_CHECK = "replay"
"""The label of the acceptance check's replay of the solution's environment, listed when that
replay failed after the REPL had accepted the code."""


CONTROL_CHECK = "control"
"""The label of the control check: listed on a ``server_error`` when the same backend, asked
right after to check a control in the same header (the request's challenge, or a trivial
example), answered it - the backend was healthy, so the model's code broke its own check."""


UNREACHED_CHECK = "unreached"
"""The label of a ``server_error`` that never reached the code: the backend could not be asked
(a batch with no answer, no live worker left). No control decides anything about such a
check, so none is run (:mod:`gapscope.lean.base`)."""


def broken_by_code(verdict: LeanVerdict) -> bool:
    """Whether a ``server_error`` is the model code's doing: it came after the REPL accepted the
    code (the replay or a kernel check, ``kernel:...``, failed on it), or the backend answered a
    control right after (:data:`CONTROL_CHECK`). Model output can provoke both (a build or an
    elaboration that exhausts memory, a REPL crash, a constant the replay drops), so callers that
    leave server errors out of a fraction must count these attempts as failures instead: else
    a model shrinks its own n by crashing the checker on the problems it cannot solve."""
    return verdict.status is Status.SERVER_ERROR and any(
        c in (REPLAY_CHECK, CONTROL_CHECK) or c.startswith("kernel:") for c in verdict.checks
    )


def with_text_label(verdict: LeanVerdict) -> LeanVerdict:
    """``verdict`` with ``checks`` = (``repl-text``,) when the REPL's text settled it and no
    check is listed yet (the soundness rule and the acceptance check set only ``checker``)."""
    if verdict.checks or verdict.checker is not Checker.REPL_TEXT:
        return verdict
    return replace(verdict, checks=(Checker.REPL_TEXT.value,))
