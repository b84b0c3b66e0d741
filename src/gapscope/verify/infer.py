"""Guessing the answer schema from the gold string alone.

The released OracleLadder milestones carry no schema, so the verifier must read it off the gold:
relation symbols, brackets, commas and words are enough for the shapes that matter. Ambiguous
two-element brackets ``(a,b)`` are read as an interval when the endpoints are increasing
numbers or infinite, as a point otherwise, which is how the teacher's golds use them.
"""

from __future__ import annotations

import re
from fractions import Fraction

from gapscope.verify.normalize import (
    clean,
    drop_thousands,
    strip_assignment,
    strip_marks,
    strip_units,
    unwrap_text,
)
from gapscope.verify.schema import AnswerSchema
from gapscope.verify.split import has_top, split_top, wrapped

_MCQ = re.compile(r"^\(?([A-H])\)?(?:$|[.:)]|\s)")
# ``A = 3``, ``B+C``, or a ratio label ``A:B = 1`` start with a capital but are not options.
_NOT_MCQ = re.compile(r"^[A-H]\s*(?:[=+\-*/^<>]|:\s*[A-Za-z]\w*\s*=)")
_MATRIX = re.compile(r"\\begin\{[pbBv]?matrix\}|\\begin\{array\}")
_RELATION = re.compile(r"\\le |\\ge |\\ne |<|>")
_WORD = re.compile(r"^[A-Za-z][A-Za-z ]{3,}$")
_LIST_WORDS = (",", ";", " or ", " and ")
_NUMBERISH = re.compile(
    r"^[-+\d.\s{}()^/*:]*$|^(?:[-+\d.\s{}()^/*:]|\\(?:frac|sqrt|pi|cdot|times|circ|infty|e)"
    r"(?![a-zA-Z])|\\(?:sin|cos|tan|log|ln|exp)(?![a-zA-Z])|_|e)*$"
)
_THOUSANDS_ONLY = re.compile(r"^-?\d{1,3}(?:,\d{3})+(?:\.\d+)?$")


def _number(text: str) -> Fraction | None:
    """A plain decimal or integer, else None."""
    try:
        return Fraction(text.replace(" ", ""))
    except (ValueError, ZeroDivisionError):
        return None


def _interval_like(opener: str, inner: str, closer: str) -> bool:
    parts = split_top(inner, (",",))
    if len(parts) != 2 or opener not in "([" or closer not in ")]":
        return False
    if opener == "[" or closer == "]" or "\\infty" in inner:
        return True
    lo, hi = _number(parts[0]), _number(parts[1])
    return lo is not None and hi is not None and lo < hi


def _is_set_braces(text: str) -> bool:
    return text.startswith("\\{") and text.endswith("\\}")


def infer_schema(gold: str) -> AnswerSchema:
    """The schema a gold answer is written in; EXPR when nothing more specific fits."""
    text = clean(gold)
    bare = unwrap_text(text)
    if _MCQ.match(bare) and not _NOT_MCQ.match(bare):
        return AnswerSchema.MCQ_STRING
    if _WORD.match(bare) and bare.lower() not in {"or", "and"}:
        return AnswerSchema.MCQ_STRING
    if _MATRIX.search(text):
        return AnswerSchema.MATRIX_VECTOR
    if "\\cup" in text or "\\cap" in text:
        return AnswerSchema.INTERVAL
    if (w := wrapped(text)) is not None and _interval_like(*w):
        return AnswerSchema.INTERVAL
    lhs = split_top(text, ("=",))
    if len(lhs) == 2 and (w := wrapped(lhs[0])) is not None and has_top(w[1], ","):
        return AnswerSchema.TUPLE_LIST
    if _RELATION.search(text):
        return AnswerSchema.INEQUALITY
    if has_top(text, "="):
        value = strip_assignment(text)  # ``a = 4, -8, -10`` is the set of values of a
        if value != text and not has_top(value, "=") and len(split_top(value, _LIST_WORDS)) > 1:
            return infer_schema(value)
        return AnswerSchema.EQUATION
    if _is_set_braces(text) and "(" not in text:
        return AnswerSchema.SET
    items = split_top(text[2:-2] if _is_set_braces(text) else text, _LIST_WORDS)
    if len(items) > 1 and all(wrapped(i) is not None for i in items):
        return AnswerSchema.TUPLE_LIST
    if (w := wrapped(text)) is not None and w[0] in "([" and has_top(w[1], ","):
        return AnswerSchema.TUPLE_LIST
    if _THOUSANDS_ONLY.match(text.replace(" ", "")):
        return AnswerSchema.NUMBER
    if len(items) > 1 or "\\pm" in text:
        return AnswerSchema.SET
    plain, _ = strip_marks(drop_thousands(unwrap_text(strip_units(text, bare=True))))
    if _NUMBERISH.match(plain):
        return AnswerSchema.NUMBER
    return AnswerSchema.EXPR
