"""Lean source with comments and literals blanked, so that scans see only code.

Statement matching (``prove``), declaration discovery (``soundness``) and the command screen
(``screen``) all search model-written Lean for keywords and statements. Text inside a comment
or a string literal is not code: a reply that writes the official statement inside ``/- -/``
must not count as stating it, and ``"#eval"`` inside a string runs nothing. Blanking (spaces,
newlines kept) instead of deleting keeps every offset, so a match in the blanked text indexes
the original. One linear pass: no recursion, no backtracking.
"""

from __future__ import annotations

import re

_CHAR_LITERAL = re.compile(r"'(?:\\(?:u\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{2}|[^\n])|[^'\\\n])'")
_RAW_STRING = re.compile(r'r(#*)"')


def _in_identifier(code: str, i: int) -> bool:
    """Whether position ``i`` continues an identifier (``h'``, ``x.r``): no literal starts."""
    return i > 0 and (code[i - 1].isalnum() or code[i - 1] in "_'!?.»")


def _block_comment_end(code: str, i: int) -> int | None:
    """The index after the ``-/`` closing the (nested) comment opened at ``i``; None if open."""
    depth = 0
    while i < len(code):
        if code.startswith("/-", i):
            depth += 1
            i += 2
        elif code.startswith("-/", i):
            depth -= 1
            i += 2
            if depth == 0:
                return i
        else:
            i += 1
    return None


def _literal_or_comment_end(code: str, i: int) -> int | None:
    """The end of the comment, raw string or char literal starting at ``i`` (``i`` if none
    starts there); None if it is never closed."""
    if code.startswith("--", i):
        end = code.find("\n", i)
        return len(code) if end < 0 else end
    if code.startswith("/-", i):
        return _block_comment_end(code, i)
    if _in_identifier(code, i):
        return i
    raw = _RAW_STRING.match(code, i)
    if raw:
        close = code.find('"' + raw[1], raw.end())
        return None if close < 0 else close + 1 + len(raw[1])
    literal = _CHAR_LITERAL.match(code, i)
    return literal.end() if literal else i


def mask_literals(code: str) -> tuple[str, bool]:
    """(``code_only(code)``, whether ``code`` ends inside a comment or string). Code that
    ends inside one hides everything after the opening from a scan, so the screen refuses it
    (Lean rejects it anyway)."""
    out = list(code)
    in_string = unclosed = False
    i = 0
    while i < len(code):
        char = code[i]
        if in_string or char == '"':
            end: int | None = i + (2 if in_string and char == "\\" else 1)
            in_string = not in_string if char == '"' else in_string
        else:
            end = _literal_or_comment_end(code, i)
        if end is None:
            end, unclosed = len(code), True
        for k in range(i, end):
            if out[k] != "\n":
                out[k] = " "
        i = max(end, i + 1)
    return "".join(out), unclosed or in_string


def code_only(code: str) -> str:
    """``code`` with comments, string and char literals blanked to spaces (newlines kept).

    ``--`` and nested ``/- -/`` comments (doc comments included), ``"..."`` strings with
    escapes, raw strings ``r#"..."#`` and char literals ``'x'``. Strings are read as plain
    Lean strings: ``{`` is not special (interpolating forms such as ``s!"..."`` are refused by
    the screen instead). An unterminated comment or string runs to the end.
    """
    return mask_literals(code)[0]
