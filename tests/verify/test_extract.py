"""Answer extraction: last box after the reasoning, balanced braces, fbox, truncation."""

from __future__ import annotations

import pytest

from gapscope.verify import extract_boxed, strip_reasoning


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
