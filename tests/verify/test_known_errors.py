"""The false accepts and false rejects listed in issue 9, each pinned (both directions).

Every ``True`` row here was a false reject and every ``False`` row a false accept before the
fix (ratios read as division, ``cases`` and ``\\cdots`` accepted by the math-verify fallback,
labels left of ``=`` not recognised, ...); the row beside it keeps the fix from overreaching.
"""

from __future__ import annotations

import pytest

from gapscope.verify import Verifier

RATIOS = [
    ("12:00", "1:00", False),
    ("1:0", "2:0", False),
    ("3:5", "6:10", True),
    ("3:5", "0.6", True),
]
SYSTEMS = [
    ("\\begin{cases} x=1 \\\\ y=2 \\end{cases}", "\\begin{cases} x=1 \\\\ y=3 \\end{cases}", False),
    ("\\begin{cases} x=1 \\\\ y=2 \\end{cases}", "\\begin{cases} y=2 \\\\ x=1 \\end{cases}", True),
    ("x=1, y=2", "\\begin{cases} x=1 \\\\ y=2 \\end{cases}", True),
    (
        "f(x)=\\begin{cases} x & x>0 \\\\ -x & x\\le 0\\end{cases}",
        "f(x)=\\begin{cases} x & x>0 \\\\ x & x\\le 0\\end{cases}",
        False,
    ),
]
ELLIPSIS_SUMS = [
    ("1+2+\\cdots+n", "1+2+\\cdots+m", False),
    ("1+3+\\cdots+99", "1+2+\\cdots+99", False),
    ("1+2+\\cdots+n", "1 + 2 + \\cdots + n", True),
]
EQUATIONS = [
    ("f(3)=7", "f(4)=7", False),
    ("f(3) = 7", "f(3)=7", True),
    ("N=995(x+1)", "N=996(x+1)", False),
    ("N=995\\cdot 2^{k}", "N=996\\cdot 2^{k}", False),
    ("N=996(1+x)", "N=996(x+1)", True),
]
LABELLED_GOLDS = [
    ("11:21", "V_1:V_2=11:21", True),
    ("11:20", "V_1:V_2=11:21", False),
    ("\\frac12", "\\frac{AN}{NC}=\\frac12", True),
    ("1", "|AB|=1", True),
    ("2", "|AB|=1", False),
    ("90^\\circ", "\\angle DEM=90^\\circ", True),
    ("45^\\circ", "\\angle DEM=90^\\circ", False),
]
# Found by perturbing one digit of every released OracleLadder gold.
PERTURBED_GOLDS = [
    ("302>301", "302>300", False),  # two true statements are not the same answer
    (
        "\\left\\lfloor\\frac{94}{5}\\right\\rfloor=18",
        "\\left\\lfloor\\frac{91}{5}\\right\\rfloor=18",
        False,
    ),
    ("302 > 300", "302>300", True),
    ("(b_1,b_2,b_0)=(a_h,a_i,a_j)", "(b_1,b_2,b_3)=(a_h,a_i,a_j)", False),
    ("(b_1,b_2,b_3)=(a_h,a_i,a_j)", "(b_1,b_2,b_3)=(a_h,a_i,a_j)", True),
    (
        "\\begin{cases}y'-y=4x\\\\y(0)=-1\\end{cases}",
        "\\begin{cases}y'-y=3x\\\\y(0)=-1\\end{cases}",
        False,
    ),
    ("\\sum_{k=9}^n (\\sqrt{k}-\\sqrt{k-1})a_k", "\\sum_{k=1}^n (\\sqrt{k}-\\sqrt{k-1})a_k", False),
]
SHAPES = [
    ("(0,1)", "0<f(x)<1", True),
    ("(0,1]", "0<f(x)<1", False),
    ("(1;2),(3;4)", "(1,2),(3,4)", True),
    ("(1,2),(3,4)", "(1;2),(3;5)", False),
    ("\\frac{1}{3}", "0.333333", True),
    ("\\frac13", "0.33", False),
    ("\\sqrt{2}", "1.414214", True),
    ("\\sqrt2", "1.41", False),
    ("125", "125\\textnormal{ miles}", True),
    ("126", "125\\textnormal{ miles}", False),
]


@pytest.mark.parametrize(
    ("answer", "gold", "accepted"),
    RATIOS + SYSTEMS + ELLIPSIS_SUMS + EQUATIONS + LABELLED_GOLDS + PERTURBED_GOLDS + SHAPES,
)
def test_known_error(verifier: Verifier, answer: str, gold: str, accepted: bool) -> None:
    verdict = verifier.check(f"So the answer is \\boxed{{{answer}}}.", gold)
    assert verdict.accepted is accepted, verdict
    assert verdict.reason != "timeout"  # every one of these is settled, none waits 5 s


MULTI_BOX = [
    ("We get \\boxed{1} and \\boxed{2}.", "\\{1,2\\}", True),
    ("We get \\boxed{1} and \\boxed{3}.", "\\{1,2\\}", False),
    ("$x_1 = \\boxed{2}$, $x_2 = \\boxed{-3}$", "x_1=2, x_2=-3", True),
    ("$x = \\boxed{2}$, $y = \\boxed{-3}$", "(2,-3)", True),
    ("$x = \\boxed{-3}$, $y = \\boxed{2}$", "(2,-3)", False),
    ("First \\boxed{1}.\n\nThen the answer is \\boxed{2}.", "\\{1,2\\}", False),
    ("\\boxed{1} no no no \\boxed{2}", "\\{1,2\\}", False),
    # a single-valued gold: two different boxes are a hedge (issue 17), not "the last box"
    ("So \\boxed{1} and \\boxed{2}.", "2", False),
    ("So \\boxed{2} and \\boxed{2}.", "2", True),
]


@pytest.mark.parametrize(("response", "gold", "accepted"), MULTI_BOX)
def test_boxes_form_one_answer_only_for_multi_valued_golds(
    verifier: Verifier, response: str, gold: str, accepted: bool
) -> None:
    verdict = verifier.check(response, gold)
    assert verdict.accepted is accepted, verdict
