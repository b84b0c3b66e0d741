"""The hostile probes of issue 17 (finding 10), each beside the legitimate answer it resembles.

Every case pairs a response that was wrongly accepted (or, for repeating decimals, wrongly
rejected) with its honest neighbour, so a fix that overreaches fails here as surely as the
original bug: several options or several boxed candidates are no answer, a space inside a
number does not join it, an infinite end closed by a bracket is not an open one.
"""

from __future__ import annotations

import pytest

from gapscope.verify import Verifier
from tests.verify.test_cli import app, runner

# (hostile response, gold, schema, honest neighbour): the first is NOT_ACCEPT, the second ACCEPT.
NOT_A_CHOICE = [
    ("\\boxed{A, B}", "A", None, "\\boxed{A}"),
    ("\\boxed{A,B,C,D,E}", "A", None, "\\boxed{(A)}"),
    ("\\boxed{A, B}", "A", "MCQ_STRING", "\\boxed{A}"),
    ("\\boxed{A,B,C,D,E}", "A", "MCQ_STRING", "The answer is \\boxed{A}."),
    ("\\boxed{C,D}", "C", None, "\\boxed{C.}"),
]
HEDGING = [
    ("\\boxed{1},...,\\boxed{5}", "5", None, "\\boxed{5}, that is, \\boxed{5}"),
    ("$\\boxed{1}, \\boxed{2}, \\boxed{3}, \\boxed{4}, \\boxed{5}$", "5", None, "$\\boxed{5}$"),
    ("\\boxed{1} or \\boxed{2}", "2", None, "\\boxed{2} or, written out, \\boxed{2.0}"),
    ("So $x = \\boxed{1}$ or $x = \\boxed{2}$.", "2", None, "So $x = \\boxed{2}$."),
    ("\\boxed{(2,1)} or \\boxed{(1,2)}", "(1,2)", None, "\\boxed{(1,2)} and \\boxed{(1, 2)}"),
    ("\\boxed{A} or \\boxed{B}", "B", None, "\\boxed{B} and again \\boxed{B}"),
    # the same rule without boxes: listed math spans, in a final statement or trailing
    ("So $x = 1$ or $x = 2$.", "x=2", None, "So $x = 1$, hence $x = 2$."),
    ("The answer is $1$ or $2$.", "1", None, "The answer is $1$, not $2$."),
    ("We find $3$, $4$ and $5$.", "5", None, "We find $5$, that is $\\frac{10}{2}$."),
]
SPLIT_NUMBERS = [
    ("\\boxed{1 2}", "12", None, "\\boxed{12}"),
    ("\\boxed{10\\ 00}", "1000", None, "\\boxed{1,\\!000}"),
    ("\\boxed{3 1}", "31", "NUMBER", "\\boxed{31}"),
    ("\\boxed{1 0 0 0}", "1000", None, "\\boxed{1 000}"),  # SI digit groups are thousands
    ("\\boxed{2 5}", "25", None, "The answer is $25$."),
]
CLOSED_INFINITY = [
    ("\\boxed{(0,\\infty]}", "(0,\\infty)", None, "\\boxed{(0,\\infty)}"),
    ("\\boxed{[-\\infty, 3)}", "(-\\infty,3)", None, "\\boxed{(-\\infty, 3)}"),
    ("\\boxed{(0,\\infty]}", "x>0", None, "\\boxed{(0, +\\infty)}"),
    (
        "\\boxed{(-\\infty,1)\\cup(2,\\infty]}",
        "(-\\infty,1)\\cup(2,\\infty)",
        None,
        "$x<1$ or $x>2$: \\boxed{(-\\infty,1)\\cup(2,\\infty)}",
    ),
]


@pytest.mark.parametrize(
    ("hostile", "gold", "schema", "honest"),
    NOT_A_CHOICE + HEDGING + SPLIT_NUMBERS + CLOSED_INFINITY,
)
def test_hostile_probe_is_refused_and_its_neighbour_accepted(
    verifier: Verifier, hostile: str, gold: str, schema: str | None, honest: str
) -> None:
    refused = verifier.check(hostile, gold, schema)
    assert refused.label == "NOT_ACCEPT", refused
    assert verifier.check(honest, gold, schema).accepted


@pytest.mark.parametrize(
    "response", ["\\boxed{1} or \\boxed{2}", "$\\boxed{3}$, $\\boxed{4}$, $\\boxed{2}$"]
)
def test_different_final_boxes_are_hedging_with_a_reason(verifier: Verifier, response: str) -> None:
    verdict = verifier.check(response, "2")
    assert (verdict.label, verdict.reason, verdict.stage) == ("NOT_ACCEPT", "hedged", "extract")


def test_hedging_rule_leaves_multi_valued_golds_whole(verifier: Verifier) -> None:
    """Boxes or math spans that together are the gold's values stay one answer, not a hedge."""
    assert verifier.check("The roots are $x=1$ and $x=2$.", "\\{1,2\\}").accepted
    assert verifier.check("So the roots are $x=1$ and $x=2$.", "\\{1,2\\}").accepted
    assert verifier.check("\\boxed{1} or \\boxed{2}", "1, 2").accepted
    assert verifier.check("$x = \\boxed{2}$, $y = \\boxed{-3}$", "(2,-3)").accepted
    assert verifier.check("\\boxed{1} or \\boxed{2}", "\\{1,2\\}").accepted
    assert verifier.check("$x = \\boxed{3}$ or $x = \\boxed{-3}$", "\\pm 3").accepted
    assert not verifier.check("\\boxed{1} or \\boxed{2}", "2").accepted


# A repeating decimal is the fraction it denotes, exactly: no tolerance is involved.
REPEATING = [
    ("\\boxed{0.\\overline{9}}", "1", "\\boxed{0.\\overline{8}}"),
    ("\\boxed{0.\\overline{3}}", "\\frac{1}{3}", "\\boxed{0.3}"),
    ("\\boxed{0.1\\overline{6}}", "\\frac16", "\\boxed{0.\\overline{16}}"),
    ("\\boxed{-2.\\overline{45}}", "-\\frac{27}{11}", "\\boxed{2.\\overline{45}}"),
    ("\\boxed{0.\\overline{142857}}", "\\frac{1}{7}", "\\boxed{0.\\overline{142856}}"),
]


@pytest.mark.parametrize(("response", "gold", "wrong"), REPEATING)
def test_repeating_decimal_is_its_exact_fraction(
    verifier: Verifier, response: str, gold: str, wrong: str
) -> None:
    assert verifier.check(response, gold).accepted
    assert not verifier.check(wrong, gold).accepted


@pytest.mark.parametrize(
    ("answer", "label"),
    [
        ("\\boxed{A, B}", "NOT_ACCEPT mismatch"),
        ("\\boxed{A,B,C,D,E}", "NOT_ACCEPT mismatch"),
        ("\\boxed{B} or \\boxed{A}", "NOT_ACCEPT hedged"),
    ],
)
def test_command_line_refuses_several_options(answer: str, label: str) -> None:
    outputs = []
    for response in (answer, "\\boxed{A}"):
        args = ["verify", "--gold", "A", "--answer", response, "--schema", "MCQ_STRING"]
        result = runner.invoke(app, [*args, "--no-cache"])
        assert result.exit_code == 0, result.output
        outputs.append(result.output)
    assert outputs[0].startswith(label), outputs[0]
    assert outputs[1].startswith("ACCEPT"), outputs[1]
