"""The negative-value guard of ``sympy_eq.scalar_eq`` (issue 30, finding 4).

A numerical agreement that sympy cannot prove counts only if it also holds at points of
negative sign: ``\\sqrt{x^2}``, ``|x|`` and ``(x^2)^{1/2}`` agree with ``x`` at every positive
point and are not ``x``. Without the guard each of them was accepted; the positive-domain
identities beside them must still pass.
"""

from __future__ import annotations

import pytest

from gapscope.verify import Verifier
from gapscope.verify.sympy_eq import close, parse, scalar_eq

POSITIVE_ONLY = ["\\sqrt{x^2}", "|x|", "(x^2)^{1/2}", "\\sqrt{x^{2}}", "\\left|x\\right|"]
EVERYWHERE = [
    ("\\sqrt{x^2}", "|x|"),
    ("(x+1)^2", "x^2+2x+1"),
    ("\\frac{x^2-1}{x-1}", "x+1"),
    ("\\sqrt{4x^2}", "2|x|"),
    ("2\\sqrt{x}\\sqrt{x}", "2x"),  # true for negative x too (i^2 = -1)
]


@pytest.mark.parametrize("answer", POSITIVE_ONLY)
def test_an_identity_of_the_positives_alone_is_refused(answer: str, verifier: Verifier) -> None:
    assert scalar_eq(parse(answer), parse("x"), False, 1e-6) == "unknown"
    verdict = verifier.check(f"\\boxed{{{answer}}}", "x")
    assert not verdict.accepted, verdict


@pytest.mark.parametrize(("answer", "gold"), EVERYWHERE)
def test_identities_that_hold_where_defined_still_pass(
    answer: str, gold: str, verifier: Verifier
) -> None:
    assert scalar_eq(parse(answer), parse(gold), False, 1e-6) in ("symbolic", "numeric")
    verdict = verifier.check(f"\\boxed{{{answer}}}", gold)
    assert verdict.accepted, verdict


def test_a_disagreement_at_positive_points_is_a_refutation() -> None:
    """``-|x|`` equals ``x`` at every negative point and at no positive one: "no", not the
    "unknown" that a missed refutation would leave."""
    assert scalar_eq(parse("-|x|"), parse("x"), False, 1e-6) == "no"


def test_the_point_tolerance_is_relative_with_an_absolute_floor_and_inclusive() -> None:
    assert close(2.0, 1.0, 1.0)  # |2 - 1| = 1 * max(1, 1): on the boundary counts as close
    assert close(101.0, 100.0, 0.01) and not close(102.0, 100.0, 0.01)  # relative to |b|
    assert close(0.5, 0.0, 0.5) and not close(0.6, 0.0, 0.5)  # the floor of 1 below |b| = 1


def test_an_undefined_side_is_never_equal() -> None:
    """``12:00`` read as 12/0 must not meet a defined gold as an "unknown" to be decided later."""
    assert scalar_eq(parse("\\frac{1}{0}"), parse("5"), False, 1e-6) == "no"
