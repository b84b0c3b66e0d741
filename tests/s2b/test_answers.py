"""Strict and flexible answer extraction."""

from __future__ import annotations

import pytest

from gapscope.s2b.answers import extract


@pytest.mark.parametrize(
    ("reply", "strict", "flexible"),
    [
        ("Step 1 ...\nAnswer: same", True, True),
        ("Answer: different\n", False, False),
        ("answer:  DIFFERENT.", False, False),
        ("Answer: same\nI hope this helps.", None, True),
        ("The objects are the same.", None, True),
        ("They look the same but are different", None, False),
        ("Yes, I think so.", None, True),
        ("No.", None, False),
        ("**Answer:** different", None, False),
        ("I cannot tell.", None, None),
        ("", None, None),
    ],
)
def test_extraction(reply: str, strict: bool | None, flexible: bool | None) -> None:
    got = extract(reply)
    assert got.strict is strict
    assert got.flexible is flexible
