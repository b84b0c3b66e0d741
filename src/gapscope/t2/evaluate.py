"""One sample's verdicts: compile, TA (parity), TA (strict), graded TA.

- compile: the compile program has no error-severity message (``sorry`` is a warning).
- TA (parity): the full program has no error-severity message - the released evaluator's
  rule, ``sorry`` accepted anywhere.
- TA (strict): TA, and the generated declaration itself has no ``sorry``/``admit`` and uses
  only the standard axioms. Successors' own ``sorry`` stays allowed: they are the tests.
- graded TA: the share of successors (the declarations that use the target) with no error of
  their own in the full program.

A timeout fails every verdict (as in T2); a backend failure (``server_error``) establishes
nothing and the sample is left out of every denominator and listed. The generated code passes
``screen`` before Lean sees it; a refused answer is ``forbidden_command`` and never checked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from gapscope.lean import (
    STANDARD_AXIOMS,
    CheckRequest,
    LeanVerdict,
    Status,
    attributes_in,
    broken_by_code,
    is_sorry_warning,
    screen_code,
)
from gapscope.t2.declarations import split_declarations
from gapscope.t2.extract import Answer, AnswerStatus
from gapscope.t2.programs import Programs, attribute, build_programs
from gapscope.t2.records import T2Record
from gapscope.t2.untested import certified

Checker = Callable[[Sequence[CheckRequest]], list[LeanVerdict]]
"""Verdicts for requests, in order (``LeanBackend.check_many`` of any executor)."""

Screen = Callable[[str], str | None]
"""A screen of model-written Lean: the reason to refuse ``code``, or None to let it through."""


def lean_screen(code: str, also_allowed: frozenset[str] = frozenset()) -> str | None:
    """The Lean layer's screen of model-written commands, as T2's refusal reason.

    The same whitelist as prove and O-NNG (``gapscope.lean.screen``): a generated declaration
    that carries ``#eval``, ``macro``, ``set_option debug...`` and the like never reaches Lean.
    ``also_allowed``: the attributes the record's own target carries (a project's custom
    attribute such as math2001's ``@[autograded]``), so that the ground truth passes.
    """
    forbidden = screen_code(code, also_allowed)
    return None if forbidden is None else forbidden.verdict().detail


class SampleOutcome(StrEnum):
    """What happened to a sample: checked by Lean, or why not."""

    CHECKED = "checked"
    RENAMED = AnswerStatus.RENAMED.value
    NO_ANSWER = AnswerStatus.NO_ANSWER.value
    FORBIDDEN = Status.FORBIDDEN.value
    SERVER_ERROR = "server_error"
    BROKE_CHECK = "broke_check"
    """The check failed on the machine, but it was the answer's doing: the backend answered a
    control right after, or the failure came after Lean accepted the code
    (:func:`gapscope.lean.verdict.broken_by_code`), or the evaluation raised on this answer and
    not on the record's ground truth. A failed answer, in every denominator: else a model
    would shrink its own n by crashing the checker on the targets it cannot prove."""
    MISSING = "missing"
    """No sample in the log (the run stopped first): a failure under the released rules,
    as the released evaluator counts an id without a result; not counted under gapscope's."""


@dataclass(frozen=True)
class SampleResult:
    """Everything the metrics need about one sample."""

    outcome: str
    compiles: bool = False
    ta: bool = False
    ta_strict: bool = False
    graded: float | None = None
    successors: int = 0
    successors_passed: int = 0
    failing_successors: tuple[str, ...] = ()
    compile_status: str | None = None
    full_status: str | None = None
    detail: str = ""
    errors: dict[str, Any] = field(default_factory=dict)
    selftest: bool | None = None
    """Whether the path that checked it passed its known-answer self-test here (False: an
    untested path the user allowed, :mod:`gapscope.t2.untested`; None: Lean never saw it)."""
    bounds: str | None = None
    """The limits that held what checked it: the compile check's REPL (file track), each
    ``lake`` call (repository track); None where nothing ran or gapscope did not start it."""

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["failing_successors"] = list(self.failing_successors)
        return data


def _no_error(verdict: LeanVerdict) -> bool:
    return verdict.status in (Status.VALID, Status.SORRY)


def _generated_sorry(code: str, compile_verdict: LeanVerdict, programs: Programs) -> bool:
    """A ``sorry``/``admit`` in the generated code, or a sorry warning Lean placed on it."""
    if any(d.uses_sorry() for d in split_declarations(code)):
        return True
    return any(
        is_sorry_warning(m) and m.line is not None and m.line in programs.generated
        for m in compile_verdict.messages
    )


def _nonstandard_axioms(record: T2Record, compile_verdict: LeanVerdict) -> list[str]:
    """Non-standard axioms of the compile program that the code before cannot explain.

    The backend reports the union over every declaration of the program, so a ``sorry`` in a
    declaration before the target (a few released records have one) puts ``sorryAx`` there
    without the generated declaration using it; that one is discounted (the generated code's
    own ``sorry`` is caught by position and text). Any other non-standard axiom counts.
    """
    found = set(compile_verdict.axioms or ()) - STANDARD_AXIOMS
    if any(d.uses_sorry() for d in split_declarations(record.before_target_code)):
        found.discard("sorryAx")
    return sorted(found)


def code_to_check(
    answer: Answer, record: T2Record, screen: Screen | None = None
) -> str | SampleResult:
    """The answer's code, or the verdict of an answer that never reaches Lean: no usable code
    was extracted, or the screen refuses a command in it. THE place where T2 screens a
    generated declaration: both tracks, the file and the repository one, start here, with
    ``lean_screen`` and the record's own attributes unless a ``screen`` is given."""
    if answer.status is not AnswerStatus.OK or answer.code is None:
        return SampleResult(answer.status.value, detail=answer.detail)
    if screen is not None:
        refusal = screen(answer.code)
    else:
        refusal = lean_screen(answer.code, attributes_in(record.target_code))
    if refusal is not None:
        return SampleResult(SampleOutcome.FORBIDDEN, detail=refusal)
    return answer.code


def evaluate_answer(
    record: T2Record,
    answer: Answer,
    check: Checker,
    timeout_s: float,
    screen: Screen | None = None,
) -> SampleResult:
    """Screen, build both programs, check them, and settle every verdict of the sample."""
    code = code_to_check(answer, record, screen)
    if isinstance(code, SampleResult):
        return code
    programs = build_programs(record, code, timeout_s)
    compiled, full = check([programs.compile, programs.full])
    broken = [v for v in (compiled, full) if v.status is Status.SERVER_ERROR]
    if broken:
        blamed = any(broken_by_code(v) for v in broken)
        return SampleResult(
            SampleOutcome.BROKE_CHECK if blamed else SampleOutcome.SERVER_ERROR,
            compile_status=compiled.status.value,
            full_status=full.status.value,
            detail=broken[0].detail,
            selftest=certified(compiled, full),
            bounds=compiled.bounds,
        )
    total = len(programs.successors)
    compiles, ta = _no_error(compiled), _no_error(full)
    if full.status is Status.TIMEOUT:
        passed, failing = 0, tuple(s.name or "?" for s in programs.successors)
        errors: dict[str, Any] = {"timeout": True}
    else:
        where = attribute(full.messages, programs)
        ok = [n == 0 and where.unplaced == 0 for n in where.successors]
        passed = sum(ok)
        pairs = zip(programs.successors, ok, strict=True)
        failing = tuple(s.name or "?" for s, good in pairs if not good)
        errors = {
            "before": where.before,
            "generated": where.generated,
            "successors": list(where.successors),
            "unplaced": where.unplaced,
            "unrelated": where.unrelated,
        }
    strict = (
        ta
        and not _generated_sorry(code, compiled, programs)
        and not _nonstandard_axioms(record, compiled)
    )
    return SampleResult(
        SampleOutcome.CHECKED,
        compiles=compiles,
        ta=ta,
        ta_strict=strict,
        graded=passed / total if total else None,
        successors=total,
        successors_passed=passed,
        failing_successors=failing,
        compile_status=compiled.status.value,
        full_status=full.status.value,
        errors=errors,
        selftest=certified(compiled, full),
        bounds=compiled.bounds,
    )


Evaluate = Callable[[T2Record, Answer], SampleResult]
"""How a sample is settled: in a Lean REPL (:func:`evaluate_answer`) or in the repository."""


def settle(evaluate: Evaluate, record: T2Record, answer: Answer) -> SampleResult:
    """``evaluate(record, answer)``, where an exception costs one sample, not the run.

    Whose sample it costs is decided by a control: the record's ground truth is evaluated the
    same way. When that goes through, the evaluation broke on this answer alone
    (``broke_check``, a failure); when it raises too, the checker is broken for the record
    (``server_error``, left out of gapscope's denominators).
    """
    try:
        return evaluate(record, answer)
    except Exception as err:
        detail = f"{type(err).__name__}: {err}"
    try:
        evaluate(record, Answer(AnswerStatus.OK, record.target_code))
    except Exception:
        return SampleResult(SampleOutcome.SERVER_ERROR, detail=detail)
    return SampleResult(
        SampleOutcome.BROKE_CHECK, detail=f"{detail} (the ground truth was checked without one)"
    )
