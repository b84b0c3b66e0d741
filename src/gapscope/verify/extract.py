"""Finding the final answer in a model response: the last ``\\boxed{}`` after the reasoning.

Models often box intermediate results while thinking; only the box after the last ``</think>``
and, among those, the last one is the answer. Braces are matched by counting, not by regex, so
nested ``\\frac{}{}`` inside the box survive and a 10,000-deep nesting costs linear time.
"""

from __future__ import annotations

import re

_THINK_END = "</think>"
_BOX_START = re.compile(r"\\(?:boxed|fbox)\s*\{")


def strip_reasoning(response: str) -> str:
    """The text after the last ``</think>``; the whole response when there is none."""
    cut = response.rfind(_THINK_END)
    return response if cut < 0 else response[cut + len(_THINK_END) :]


def _closing_brace(text: str, start: int) -> int | None:
    """Index of the brace closing the one opened just before ``start``, ignoring ``\\{``."""
    depth = 1
    i = start
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None


def extract_boxed(text: str) -> str | None:
    """Content of the last balanced ``\\boxed{...}``/``\\fbox{...}`` after the reasoning.

    An unclosed last box is skipped in favour of the previous closed one: a response truncated
    mid-box did not commit to that answer.
    """
    body = strip_reasoning(text)
    for match in reversed(list(_BOX_START.finditer(body))):
        end = _closing_brace(body, match.end())
        if end is not None:
            return body[match.end() : end].strip()
    return None
