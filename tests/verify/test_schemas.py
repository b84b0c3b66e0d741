"""Schema inference and one accept/reject pair per schema through the whole cascade."""

from __future__ import annotations

import pytest

from gapscope.verify import Verifier, infer_schema
from gapscope.verify.schema import AnswerSchema


@pytest.mark.parametrize(
    ("gold", "schema"),
    [
        ("(-1,1)", AnswerSchema.INTERVAL),
        ("\\cos4\\theta", AnswerSchema.EXPR),
        (
            "8\\cos\\theta\\cos2\\theta\\cos4\\theta=\\frac{\\sin8\\theta}{\\sin\\theta}",
            AnswerSchema.EQUATION,
        ),
        ("D", AnswerSchema.MCQ_STRING),
        ("-3,2,5", AnswerSchema.SET),
        ("3:5", AnswerSchema.NUMBER),
        ("45^\\circ", AnswerSchema.NUMBER),
        ("6.9 \\mathrm{~cm}", AnswerSchema.NUMBER),
        ("4 \\text{ or } 2 \\frac{1}{4}", AnswerSchema.SET),
        ("1,000", AnswerSchema.NUMBER),
        ("(2,2,0)", AnswerSchema.TUPLE_LIST),
        ("t^2-2t-3\\ge 0", AnswerSchema.INEQUALITY),
        ("\\begin{pmatrix}1\\\\2\\end{pmatrix}", AnswerSchema.MATRIX_VECTOR),
        ("(-\\infty,2)\\cup(3,\\infty)", AnswerSchema.INTERVAL),
    ],
)
def test_infer_schema(gold: str, schema: AnswerSchema) -> None:
    assert infer_schema(gold) == schema


CASES = [
    ("NUMBER", "\\frac{10}{4}", "2.5", True),
    ("NUMBER", "3.14", "\\pi", False),
    ("NUMBER", "1,000", "1000", True),
    ("EXPR", "2\\cos^2 2\\theta-1", "\\cos 4\\theta", True),
    ("EXPR", "\\cos 2\\theta", "\\cos 4\\theta", False),
    ("EQUATION", "2x-y+1=0", "y=2x+1", True),
    ("EQUATION", "y=2x-1", "y=2x+1", False),
    ("INEQUALITY", "(2,\\infty)", "x>2", True),
    ("INEQUALITY", "x<2", "x>2", False),
    ("INEQUALITY", "a\\le b", "a\\ge b", False),
    ("SET", "\\{5,2,-3\\}", "-3,2,5", True),
    ("SET", "1,000", "1000", False),
    ("INTERVAL", "-1<x<1", "(-1,1)", True),
    ("INTERVAL", "[-1,1)", "(-1,1)", False),
    ("TUPLE_LIST", "(3,4),(1,2)", "\\{(1,2),(3,4)\\}", True),
    ("TUPLE_LIST", "(0,2,2)", "(2,2,0)", False),
    ("MATRIX_VECTOR", "(1,2,3)", "\\begin{pmatrix}1\\\\2\\\\3\\end{pmatrix}", True),
    ("MATRIX_VECTOR", "(3,2,1)", "\\begin{pmatrix}1\\\\2\\\\3\\end{pmatrix}", False),
    ("MCQ_STRING", "D) 7", "D", True),
    ("MCQ_STRING", "(A) and (D)", "D", False),
]


@pytest.mark.parametrize(("schema", "answer", "gold", "accepted"), CASES)
def test_schema_pairs(
    verifier: Verifier, schema: str, answer: str, gold: str, accepted: bool
) -> None:
    verdict = verifier.check(f"Reasoning... \\boxed{{{answer}}}", gold, schema)
    assert verdict.accepted is accepted, verdict


def test_compare_bare_answers(verifier: Verifier) -> None:
    assert verifier.compare("\\frac12", "0.5").accepted
    assert not verifier.compare("x<2", "x>2").accepted


def test_unboxed_statement_is_flexible_not_strict(verifier: Verifier) -> None:
    verdict = verifier.check("The answer is 12.", "12")
    assert (verdict.label, verdict.extraction, verdict.strict) == ("ACCEPT", "statement", False)


def test_no_answer_at_all(verifier: Verifier) -> None:
    verdict = verifier.check("We tried several approaches.\n\nNone of them worked out.", "12")
    assert (verdict.label, verdict.reason, verdict.extraction) == ("NOT_ACCEPT", "no_boxed", "none")
