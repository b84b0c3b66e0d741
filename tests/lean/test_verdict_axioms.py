"""Every settled failure keeps the axioms Lean reported (a reader of a LEAN_ERROR or a
MISSING_DECLARATION sees what the code depended on), and an axiom report printed on the
code's own last line is the code's output, not our query's."""

from __future__ import annotations

import dataclasses

import pytest

from gapscope.lean.protocol import ReplResponse
from gapscope.lean.soundness import Prepared, judge, prepare
from gapscope.lean.verdict import LeanMessage, Status

STD = "[propext, Classical.choice, Quot.sound]"
AXIOMS = ("Classical.choice", "Quot.sound", "propext")
CODE = "theorem foo : True := trivial"
TWO = prepare(f"{CODE}\ntheorem bar : True := trivial")
"""Two declarations, of which the responses below report ``foo`` only."""


def _report(prepared: Prepared) -> LeanMessage:
    return LeanMessage("info", f"'foo' depends on axioms: {STD}", prepared.code_lines + 1, 0)


@pytest.mark.parametrize(
    ("prepared", "extra", "status"),
    [
        (prepare(CODE), (LeanMessage("error", "type mismatch", 1, 4),), Status.LEAN_ERROR),
        (prepare(CODE, required=("official",)), (), Status.MISSING_DECLARATION),
        (dataclasses.replace(prepare(CODE), unread="line 2"), (), Status.SERVER_ERROR),
        (TWO, (), Status.SERVER_ERROR),  # bar's report is missing
        (TWO, (LeanMessage("error", "unknown constant 'bar'", 4, 0),), Status.LEAN_ERROR),
    ],
)
def test_a_failed_verdict_keeps_the_axioms_lean_reported(
    prepared: Prepared, extra: tuple[LeanMessage, ...], status: Status
) -> None:
    response = ReplResponse(env=1, messages=(*extra, _report(prepared)))
    verdict = judge(response, prepared, 0.1)
    assert verdict.status is status
    assert verdict.axioms == AXIOMS


def test_a_report_on_the_codes_last_line_is_not_the_query() -> None:
    prepared = prepare('theorem foo : True := by\n  trace "x"\n  exact trivial')
    forged = LeanMessage("info", f"'foo' depends on axioms: {STD}", prepared.code_lines, 0)
    assert judge(ReplResponse(env=1, messages=(forged,)), prepared, 0.1).status is (
        Status.SERVER_ERROR
    )
    assert judge(ReplResponse(env=1, messages=(_report(prepared),)), prepared, 0.1).status is (
        Status.VALID
    )
