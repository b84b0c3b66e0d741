"""Blanking comments and literals: what the scans of model-written Lean see."""

from __future__ import annotations

import pytest

from gapscope.lean.source import code_only, mask_literals


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("a -- b\nc /- d\ne -/ f", "a     \nc     \n     f"),
        ("/- a /- b -/ c -/ d", "                  d"),
        ('x "a\\"b" y', "x        y"),
        ('x "/-" y', "x      y"),
        ("h' 'a' '\\n' '\"' x", "h'              x"),
        ('r#"a"b"# t', "         t"),
        ("f x.r y", "f x.r y"),
    ],
)
def test_comments_and_literals_are_blanked_keeping_offsets(code: str, expected: str) -> None:
    assert code_only(code) == expected
    assert len(code_only(code)) == len(code)


@pytest.mark.parametrize(
    ("code", "unterminated"),
    [("/- open", True), ('"open', True), ('r#"open"', True), ("ok -- x", False), ("'a'", False)],
)
def test_unterminated_comments_and_strings_are_reported(code: str, unterminated: bool) -> None:
    assert mask_literals(code) == (code_only(code), unterminated)
