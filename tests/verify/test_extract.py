"""Answer extraction: last box after the reasoning, statements, trailing math, box groups."""

from __future__ import annotations

import pytest

from gapscope.verify import extract_boxed, strip_reasoning
from gapscope.verify.extract import find_answer


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("so \\boxed{3} and finally \\boxed{7}.", "7"),
        ("\\boxed{\\frac{1}{\\sqrt{2}}}", "\\frac{1}{\\sqrt{2}}"),
        ("\\fbox{42}", "42"),
        ("\\boxed {5}", "5"),
        ("\\boxed{\\{1,2\\}}", "\\{1,2\\}"),
        ("<think>\\boxed{1}</think> answer \\boxed{2}", "2"),
        ("<think>\\boxed{1}</think> no box here", None),
        ("no box at all", None),
        ("\\boxed{3} then truncated \\boxed{4", "3"),
        ("\\boxed{\\begin{pmatrix}1\\\\2\\end{pmatrix}}", "\\begin{pmatrix}1\\\\2\\end{pmatrix}"),
    ],
)
def test_extract_boxed(text: str, expected: str | None) -> None:
    assert extract_boxed(text) == expected


def test_strip_reasoning_uses_last_think() -> None:
    assert strip_reasoning("<think>a</think>b<think>c</think>d") == "d"
    assert strip_reasoning("plain") == "plain"


def test_deep_nesting_is_linear() -> None:
    deep = "\\boxed{" + "{" * 10_000 + "1" + "}" * 10_000 + "}"
    assert extract_boxed(deep) == "{" * 10_000 + "1" + "}" * 10_000


@pytest.mark.parametrize(
    ("text", "answer", "stage"),
    [
        ("Work.\n\nThe answer is $\\frac{3}{4}$.", "\\frac{3}{4}", "statement"),
        ("Final Answer: 12", "12", "statement"),
        ("**Final answer:** $x = 3$", "x = 3", "statement"),
        ("Therefore the area is 36 square units.", "36", "statement"),
        ("Final Answer: The volume of $V$ is 120. I hope it is correct.", "120", "statement"),
        ("Thus $x \\geq 5$ is the solution.", "x \\geq 5", "trailing_math"),
        ("We compute and get $$\\sqrt{2}$$", "\\sqrt{2}", "trailing_math"),
        ("The pair $(x, y)$ we need: $(7, 6)$. <|im_start|>user", "(7, 6)", "trailing_math"),
        ("42", "42", "bare"),
        # a statement after the last box is the model's last word
        (
            "so $\\boxed{255}$ more.\nFinal Answer: The final answer is $10,455$.",
            "10,455",
            "statement",
        ),
        ("The answer is \\boxed{12}. I double-checked.", "12", "boxed"),
    ],
)
def test_find_answer_stages(text: str, answer: str, stage: str) -> None:
    found = find_answer(text)
    assert found is not None
    assert (found.answer, found.stage) == (answer, stage)


@pytest.mark.parametrize(
    "text",
    [
        "We tried a few things.\n\nNothing worked.",
        "The answer is \\boxed{12",  # cut off inside its box: no answer, not "\\boxed{12"
        "We know $x=2$ and then we go on with a long discussion of other matters, none of which "
        "says what the answer is.",
    ],
)
def test_find_answer_none(text: str) -> None:
    assert find_answer(text) is None


def test_box_group() -> None:
    found = find_answer("$x_1=\\boxed{1}$, $x_2=\\boxed{2}$ and \\boxed{3}")
    assert found is not None and found.group == ("1", "2", "3")
    found = find_answer("\\boxed{1}\n\nso then \\boxed{2}")
    assert found is not None and found.group == ("2",)


@pytest.mark.parametrize(
    ("text", "listed"),
    [
        ("\\boxed{1} or \\boxed{2}", 2),
        ("$x_1 = \\boxed{1}$, $x_2 = \\boxed{2}$, ..., \\boxed{5}", 3),
        ("First $\\boxed{3}$ for part one, and overall \\boxed{7}.", 1),
        ("\\boxed{3} for part one, \\boxed{4} or \\boxed{7}", 2),
    ],
)
def test_boxes_written_as_a_list(text: str, listed: int) -> None:
    """Only boxes with nothing but connectors and labels between them list candidates."""
    found = find_answer(text)
    assert found is not None and found.listed == listed
