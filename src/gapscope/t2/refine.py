"""Rounds of compile feedback (``refine``): the paper's Hilbert-style baseline.

The paper sets its one-pass generations beside Hilbert, which revises an answer with the
compiler's feedback, and finds that the feedback lifts Hard TA only from 3.2 % to 5.0 %: a
compiler's errors say whether the declaration elaborates, not whether it means the right
thing. Here each round checks the *compile* program (header + code before + the answer, the
program T2's compile metric checks) and hands Lean's error text back; a round ends the loop
when the answer compiles, when there is nothing to say (the backend failed), or after
``refine`` rounds. The successors are never checked here and their errors are never shown:
they are the test, and an answer fitted to them would measure the feedback, not the model.

What one attempt hands back (``prompts/refine_*.txt``): each error-severity message of the
compile program with where it sits (a line of the answer, counted from the answer's first
line, or the code before it), at most :data:`MAX_MESSAGES` of them; a check that timed out
says so; an answer that never reached Lean (no lean block, another name, a refused command)
gets the reason it was not checked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gapscope.lean import LeanMessage, Status
from gapscope.t2.evaluate import Checker, SampleResult, Screen, code_to_check
from gapscope.t2.extract import Answer
from gapscope.t2.programs import Programs, build_programs
from gapscope.t2.prompting import template
from gapscope.t2.records import T2Record
from gapscope.t2.successors import target_identity

MAX_MESSAGES = 20
"""Error messages handed back per round; more are counted, not shown (a broken answer can
draw hundreds, all caused by the first)."""

COMPILES = "compiles"
"""An attempt's status when its compile program has no error (``sorry`` is a warning)."""


@dataclass(frozen=True)
class Attempt:
    """One answer's compile check: its ``status`` (``compiles``, a Lean status such as
    ``lean_error``/``timeout``/``server_error``, or why it was not checked) and the
    ``feedback`` to hand back (None: stop refining)."""

    status: str
    feedback: str | None = None


Attempting = Callable[[T2Record, Answer], Attempt]
"""How an answer is tried before it is final: :func:`compile_attempt` bound to a checker."""


def _where(message: LeanMessage, programs: Programs) -> str:
    line = message.line
    if line is not None and line in programs.generated:
        return f"line {line - programs.generated.start + 1} of your declaration"
    if line is not None and line in programs.before:
        return f"line {line - programs.before.start + 1} of the code before it"
    return "the file"


def error_report(messages: tuple[LeanMessage, ...], programs: Programs) -> str:
    """Lean's error-severity messages, one paragraph each, with where each one sits."""
    errors = [m for m in messages if m.severity == "error"]
    shown = [f"- {_where(m, programs)}: {m.data.strip()}" for m in errors[:MAX_MESSAGES]]
    if len(errors) > MAX_MESSAGES:
        shown.append(f"- ... and {len(errors) - MAX_MESSAGES} more errors")
    return "\n".join(shown)


def compile_attempt(
    record: T2Record,
    answer: Answer,
    check: Checker,
    timeout_s: float,
    screen: Screen | None = None,
) -> Attempt:
    """Check ``answer``'s compile program and say what to hand back (module docstring)."""
    name = target_identity(record).name
    code = code_to_check(answer, record, screen)
    if isinstance(code, SampleResult):  # never reached Lean: say why
        reason = code.detail or code.outcome
        return Attempt(code.outcome, template("refine_unchecked").format(name=name, reason=reason))
    programs = build_programs(record, code, timeout_s)
    [verdict] = check([programs.compile])
    if verdict.status in (Status.VALID, Status.SORRY):
        return Attempt(COMPILES)
    if verdict.status is Status.TIMEOUT:
        feedback = template("refine_timeout").format(name=name, seconds=f"{timeout_s:g}")
        return Attempt(verdict.status.value, feedback)
    errors = error_report(verdict.messages, programs)
    if verdict.status is not Status.LEAN_ERROR or not errors:  # a backend failure: no advice
        return Attempt(verdict.status.value)
    return Attempt(verdict.status.value, template("refine_errors").format(name=name, errors=errors))
