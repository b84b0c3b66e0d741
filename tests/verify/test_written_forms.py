"""Answers that were refused for their typesetting alone (issue 30, finding 5), each beside a
wrong answer of the same form that must stay refused.

A response that is the gold text itself is accepted whatever the gold's form; Unicode
superscripts, ``\\color`` and ``\\phantom`` are typesetting; a ``\\frac`` nested 60 deep (inside
the nesting cap of 64) is decided before the deadline, never timed out, and one nested past
the cap is refused by the cap.
"""

from __future__ import annotations

import pytest

from gapscope.verify import Verifier
from gapscope.verify.limits import MAX_NESTING
from gapscope.verify.normalize import clean
from gapscope.verify.verdict import MISMATCH, TIMEOUT, TOO_COMPLEX

SENTENCE = "$z=0$ is a pole of the fourth order for $f(z)$"


def test_a_response_that_is_the_gold_is_accepted_whatever_its_form(verifier: Verifier) -> None:
    for gold in (SENTENCE, "The function is increasing on $(0, 1)$", "$\\{1, 2\\}$ and $3$"):
        verdict = verifier.check(gold, gold)
        assert verdict.accepted and verdict.stage == "identical", (gold, verdict)
        assert not verdict.strict  # no box: a boxed-only grader would not see it
    assert verifier.check(f"  {SENTENCE}\n", SENTENCE).accepted
    other = "$z=0$ is a pole of the third order for $f(z)$"
    assert verifier.check(other, SENTENCE).stage != "identical"
    assert not verifier.check(other, SENTENCE).accepted


@pytest.mark.parametrize(
    ("answer", "gold", "accepted"),
    [
        ("x²", "x^2", True),
        ("x^2", "x²", True),
        ("x²+1", "x^{2}+1", True),
        ("2³", "8", True),
        ("10⁻³", "0.001", True),
        ("x²", "x^3", False),
        ("2³", "6", False),
        ("\\color{red}{7}", "7", True),
        ("\\color{red}7", "7", True),
        ("\\textcolor{blue}{7}", "7", True),
        ("{\\color{red} 7}", "7", True),
        ("\\color{red}{7}", "8", False),
        ("3\\phantom{4}", "3", True),
        ("3\\hphantom{\\frac{1}{2}}", "3", True),
        ("3\\phantom{4}", "34", False),
    ],
)
def test_superscripts_colour_and_phantoms_are_typesetting(
    answer: str, gold: str, accepted: bool, verifier: Verifier
) -> None:
    verdict = verifier.check(f"\\boxed{{{answer}}}", gold)
    assert verdict.accepted is accepted, verdict


def test_clean_writes_superscripts_as_powers_and_drops_invisible_markup() -> None:
    assert clean("x²⁺¹") == "x^{2+1}" and clean("\\color{red}{7}") == "7"
    assert clean("3\\phantom{4}") == "3" and clean("\\vphantom{x}y") == "y"


def _shapes(depth: int) -> dict[str, str]:
    """Expressions of value 2 with ``depth`` nested fractions (each adds a brace level)."""
    return {
        "numerators": "\\frac{" * depth + "2" + "}{1}" * depth,
        "denominators": "\\frac{1}{" * depth + "2" + "}" * depth,
        "dfrac denominators": "\\dfrac{1}{" * depth + "2" + "}" * depth,
    }


@pytest.mark.parametrize("shape", list(_shapes(1)))
def test_deep_nesting_below_the_cap_is_decided_not_timed_out(
    shape: str, verifier: Verifier
) -> None:
    nested = _shapes(60)[shape]
    right = verifier.check(f"\\boxed{{{nested}}}", "2")
    wrong = verifier.check(f"\\boxed{{{nested}}}", "3")
    assert right.accepted, right
    assert not wrong.accepted and wrong.reason == MISMATCH, wrong
    assert TIMEOUT not in (right.reason, wrong.reason)


def test_deep_nesting_past_the_cap_is_refused_by_the_cap(verifier: Verifier) -> None:
    nested = _shapes(MAX_NESTING + 1)["denominators"]
    verdict = verifier.check(f"\\boxed{{{nested}}}", "2")
    assert not verdict.accepted and verdict.reason == TOO_COMPLEX, verdict
