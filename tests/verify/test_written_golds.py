"""Issue 20: golds written as solutions, long unboxed answers, sums, and perturbed golds.

Each case was a miss against a peer's suite or on the released golds: a gold whose own final
answer was not extracted, units or thousands separators around a number, several boxed golds
against one tuple, a long answer with no answer span, reordered factors inside a sum. Each is
paired with a wrong answer to the same gold, which must stay NOT_ACCEPT. The last tests run
over the released golds when they are on disk (they are never committed).
"""

from __future__ import annotations

import json

import pytest

from gapscope.verify import Verifier
from gapscope.verify.extract import read_gold
from gapscope.verify.split import split_top
from tests.environment import SharedData

# (response, gold written as a solution, a wrong response to the same gold)
SOLUTION_GOLDS = [
    (
        "is $\\boxed{11,\\! 111,\\! 111,\\! 100}$",
        " So the answer is: \\[ \\boxed{11111111100} \\]",
        "is $\\boxed{11,\\! 111,\\! 111,\\! 101}$",
    ),
    (
        "is $\\boxed{32,\\! 349}$",
        " So the answer is: \\[ \\boxed{32349} \\]",
        "$\\boxed{32,\\! 348}$",
    ),
    (
        "The distance is $\\boxed{125\\textnormal{ miles}}.$",
        "$125$ miles",
        "The distance is $\\boxed{126\\textnormal{ miles}}.$",
    ),
    (
        "Thus, the answer is $x \\in \\boxed{(2,12) \\cup (12,102)}$",
        "Thus, the domain of \\( f(x) \\) is: \\[ \\boxed{(2, 12) \\cup (12, 102)} \\]",
        "Thus, the answer is $x \\in \\boxed{(2,12] \\cup (12,102)}$",
    ),
    # several boxed golds against one boxed tuple or list
    ("$\\boxed{1,2}$", "$\\boxed{1}\\boxed{2}$", "$\\boxed{1,3}$"),
    ("$\\boxed{(1, 2)}$", "\\boxed{1} papers and \\boxed{2} bins", "$\\boxed{(2, 1)}$"),
]


@pytest.mark.parametrize(("response", "gold", "wrong"), SOLUTION_GOLDS)
def test_gold_written_as_a_solution_is_read_for_its_answer(
    verifier: Verifier, response: str, gold: str, wrong: str
) -> None:
    assert verifier.check(response, gold).accepted
    assert not verifier.check(wrong, gold).accepted


def test_read_gold_keeps_bare_golds_and_reads_written_ones() -> None:
    assert read_gold("\\frac{1}{2}").answer == "\\frac{1}{2}"
    assert read_gold("$125$ miles").answer == "125 miles"
    assert read_gold("\\boxed{1} papers and \\boxed{2} bins").group == ("1", "2")
    assert read_gold("\\boxed{3} and \\boxed{3}").answer == "3"
    long = "We work it out at length, line by line.\n\nThe answer is $\\frac{3}{4}$."
    assert read_gold(long).answer == "\\frac{3}{4}"
    # a prose gold is kept whole: "so ... is" does not cut it down to a fragment
    prose = "Two cases remain, so the count is 5 when n is odd and 6 when n is even, as tabulated"
    assert read_gold(prose).answer == prose


def test_several_boxes_against_a_tuple_gold_and_back(verifier: Verifier) -> None:
    assert verifier.check("$a = \\boxed{3}$, $b = \\boxed{1}$", "(3, 1)").accepted
    assert verifier.check("$\\boxed{(3, 1)}$", "$a = \\boxed{3}$, $b = \\boxed{1}$").accepted
    assert not verifier.check("$\\boxed{(3, 1)}$", "$a = \\boxed{3}$, $b = \\boxed{2}$").accepted


LONG = "(0,1,7),(1,3,7),(3,19,19),(10,201,67),(-1,3,-21),(-2,9,-21),(-4,33,-33),(-11,243,-81)"


TUPLES = (
    "(-\\sqrt{7},-\\sqrt{2}),(-\\sqrt{7},\\sqrt{2}),(\\sqrt{7},-\\sqrt{2}),(\\sqrt{7},\\sqrt{2})"
)


def test_long_unboxed_answer_is_the_whole_response_but_prose_is_not(verifier: Verifier) -> None:
    cases = [
        (LONG, LONG, True),
        (LONG.replace("201", "202"), LONG, False),
        (TUPLES, ",".join(reversed(split_top(TUPLES, (",",)))), True),
    ]
    for response, gold, accepted in cases:
        verdict = verifier.check(response, gold)
        assert (verdict.accepted, verdict.extraction) == (accepted, "bare"), (response, verdict)
    prose = "We tried several substitutions and none of them gave a clean closed form for this sum"
    assert verifier.check(prose, "5").reason == "no_boxed"


# Sums, products and integrals are compared unevaluated, but in sympy's canonical order.
SUMS = [
    (
        "F_n = \\sum_{k=0}^{n-1} F_{n-k-1} F_k",
        "F_n = \\sum_{k=0}^{n-1} F_k F_{n-k-1}",
        "F_n = \\sum_{k=1}^{n-1} F_k F_{n-k-1}",
    ),
    ("\\prod_{k=1}^{n} (k+1) k", "\\prod_{k=1}^{n} k(k+1)", "\\prod_{k=1}^{n} k(k+2)"),
    ("\\sum_{k=1}^{n} (k + k^2)", "\\sum_{k=1}^{n} (k^2 + k)", "\\sum_{k=1}^{n} (k^2 + 2k)"),
    ("\\int_0^1 (1 + x^2)\\,dx", "\\int_0^1 (x^2 + 1)\\,dx", "\\int_0^2 (x^2 + 1)\\,dx"),
]


@pytest.mark.parametrize(("answer", "gold", "wrong"), SUMS)
def test_reordered_terms_inside_a_sum_are_the_same_answer(
    verifier: Verifier, answer: str, gold: str, wrong: str
) -> None:
    assert verifier.check(f"$\\boxed{{{answer}}}$", gold).accepted
    assert not verifier.check(f"$\\boxed{{{wrong}}}$", gold).accepted


# Found by perturbing one digit of every released gold: each was accepted before.
PERTURBED = [
    ("\\textbf{(E)}16", "\\textbf{(E)}15", "\\textbf{(E)}"),
    ("(C) 3.16 \\mathrm{~m}", "(C) 3.15 \\mathrm{~m}", "(C) 3.15\\mathrm{~m}"),
    ("(C) -3.15 \\mathrm{~m}", "(C) 3.15 \\mathrm{~m}", "(C)"),
    ("(4,4\\sqrt{3}]", "(4,4\\sqrt{3})", "(4, 4\\sqrt{3})"),
    ("(2,3,2),(6,3,1]", "(2,3,2),(6,3,1)", "(6,3,1),(2,3,2)"),
    ("D.p=-\\sqrt{1+3q}", "D.p=-\\sqrt{1+2q}", "D"),
    ("52_9", "52_8", "52_8"),
    ("4210_{6}", "4210_{5}", "4210_5"),
    ("(100111)_{2}", "(100011)_{2}", "(100011)_2"),
    ("864 \\mbox{ inches}^3", "864 \\mbox{ inches}^2", "864"),
    ("15\\mbox{ cm}^3", "15\\mbox{ cm}^2", "15 \\text{ cm}^2"),
    ("10l^3", "10l^2", "10l^2"),
    ("f(3)=-\\frac{5}{3}f(1)+\\frac{8}{3}f(3)", "f(3)=-\\frac{5}{3}f(1)+\\frac{8}{3}f(2)", None),
    ("\\log_6 12=\\frac{\\lg 12}{\\lg 5}", "\\log_5 12=\\frac{\\lg 12}{\\lg 5}", None),
    ("x=3\\left(2<y<\\frac{5}{2}\\right)", "x=2\\left(2<y<\\frac{5}{2}\\right)", None),
    ("n=3, I=\\frac{\\sqrt{3}}{0} \\mathrm{i}", "n=3, I=\\frac{\\sqrt{3}}{9} \\mathrm{i}", None),
]


@pytest.mark.parametrize(("perturbed", "gold", "honest"), PERTURBED)
def test_perturbed_gold_is_not_accepted(
    verifier: Verifier, perturbed: str, gold: str, honest: str | None
) -> None:
    verdict = verifier.check(f"So the answer is $\\boxed{{{perturbed}}}$.", gold)
    assert verdict.label == "NOT_ACCEPT", verdict
    assert verifier.check(f"So the answer is $\\boxed{{{honest or gold}}}$.", gold).accepted


def _released_golds(shared_data: SharedData) -> list[str]:
    families = shared_data("oracleladder/data/diagnostic_354_families.jsonl")
    golds = []
    for line in families.read_text(encoding="utf-8").splitlines():
        family = json.loads(line)
        golds += [family["parent_answer"], *(m["answer"] for m in family["milestones"])]
        golds += [family["parent_answer_corrected"]] if "parent_answer_corrected" in family else []
    return golds


def _one_digit_off(gold: str) -> str | None:
    digits = [i for i, ch in enumerate(gold) if ch.isdigit()]
    if not digits:
        return None
    i = digits[-1]
    return gold[:i] + str((int(gold[i]) + 1) % 10) + gold[i + 1 :]


def test_released_golds_accept_themselves(verifier: Verifier, shared_data: SharedData) -> None:
    golds = _released_golds(shared_data)
    verdicts = verifier.check_many([(g, g) for g in golds])
    refused = [g for g, v in zip(golds, verdicts, strict=True) if not v.accepted]
    assert len(refused) <= 1, refused  # a prose gold ("$z=0$ is a pole of ... $f(z)$"); 7 before


def test_released_golds_refuse_a_digit_off(verifier: Verifier, shared_data: SharedData) -> None:
    """Every tenth released gold with its last digit changed (all of them take minutes)."""
    golds = _released_golds(shared_data)[::10]
    pairs = [(p, g) for g in golds if (p := _one_digit_off(g)) is not None]
    verdicts = verifier.check_many([(f"So $\\boxed{{{p}}}$.", g) for p, g in pairs])
    accepted = [pair for pair, v in zip(pairs, verdicts, strict=True) if v.accepted]
    assert not accepted, accepted
