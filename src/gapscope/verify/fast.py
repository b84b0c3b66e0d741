"""In-process fast paths: string equality, exact rational arithmetic, multiple-choice letters.

Most graded answers are integers, fractions, letters or typeset-identical strings. Deciding them
here with ``fractions.Fraction`` costs microseconds and needs no worker process, which is where
the verifier's throughput comes from. Anything these rules cannot settle returns None and goes
on to the isolated symbolic stage.
"""

from __future__ import annotations

import re
from decimal import Decimal
from fractions import Fraction

from gapscope.verify.normalize import Marks, canonical, clean, squeeze, unwrap_text
from gapscope.verify.schema import AnswerSchema
from gapscope.verify.split import split_top
from gapscope.verify.verdict import (
    MISMATCH,
    NUMERIC_MATCH,
    STRING_MATCH,
    Verdict,
    accept,
    reject,
)

STAGE = "fast"
_INT_OR_DEC = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)$")
_FRAC = re.compile(r"^([-+]?)\\frac\{([-+]?\d+)\}\{([-+]?\d+)\}$")
_SLASH = re.compile(r"^([-+]?\d+)\s*/\s*(\d+)$")
_CHOICE = re.compile(r"^(?:option|answer|choice)?\s*:?\s*\(?([A-Ha-h])\)?(?=$|[.:)\s,])")
# Another option named after the first (``(B)``, ``or C``, ``A, B``): several options are no choice.
_OTHER_CHOICE = re.compile(
    r"(?<![A-Za-z\\])\(?([A-H])\)(?![A-Za-z])|(?:\b(?:and|or)\s+|[,;/&]\s*)\(?[A-H]\b"
)
_FINE_PRECISION = Fraction(1, 10**4)
# A number with a space inside it (``1 2``); a sub/superscript before a number (``\\log_2 8``,
# ``\\cos^2 2\\theta``) is a separate token, not a split number.
_SPLIT_NUMBER = re.compile(r"(?<![\d_^.])\d+ \d")
# A number written in a base (``52_8``, ``4210_{5}``, ``(100011)_2``).
_BASE_NUMBER = re.compile(r"[\d)]_\{?\d")
# An infinite end closed by a bracket (``(0,\\infty]``): sympy reads it as open, which it is not.
_CLOSED_INFINITY = re.compile(r"\[\s*[-+]?\s*\\infty|\\infty\s*\]")
_SET_WRAP = re.compile(r"^\\\{(.*)\\\}$", re.DOTALL)


def _exact(digits: str) -> Fraction:
    """A decimal literal as a Fraction, through Decimal: ``int()`` refuses >= 4,301 digits."""
    return Fraction(Decimal(digits))


def plain_number(text: str) -> Fraction | None:
    """An integer, a decimal, ``\\frac{p}{q}`` or ``p/q`` as an exact Fraction, else None."""
    text = text.replace(" ", "")
    try:
        if _INT_OR_DEC.match(text):
            return _exact(text)
        if (m := _FRAC.match(text)) is not None:
            value = _exact(m.group(2)) / _exact(m.group(3))
            return -value if m.group(1) == "-" else value
        if (m := _SLASH.match(text)) is not None:
            return _exact(m.group(1)) / _exact(m.group(2))
    except ZeroDivisionError:
        return None
    return None


def rounds_to(value: Fraction, gold_text: str) -> bool:
    """Whether an exact value rounds to a decimal gold written to a fine precision.

    A gold ``0.333333`` stands for ``1/3`` rounded to its last written digit; a coarse gold
    (``0.33``: half a unit of the last digit is over 1e-4 of the value) grants nothing.
    """
    text = gold_text.replace(" ", "")
    gold = plain_number(text)
    if gold is None or gold == 0 or "." not in text or not _INT_OR_DEC.match(text):
        return False
    half_unit = Fraction(1, 2 * 10 ** (len(text) - text.index(".") - 1))
    return half_unit <= _FINE_PRECISION * abs(gold) and abs(value - gold) <= half_unit


def numbers_match(answer: Fraction, gold: Fraction, approx: bool, rel_tol: float) -> bool:
    """Exact equality; within ``rel_tol`` only when a decimal was written."""
    if answer == gold:
        return True
    return approx and abs(answer - gold) <= Fraction(rel_tol) * max(abs(gold), Fraction(1, 10**9))


def scaled_candidates(value: Fraction, marks: Marks, other: Marks) -> list[Fraction]:
    """The values an answer may stand for once a percent sign on one side only is resolved."""
    if marks.percent and not other.percent:
        return [value, value / 100]
    return [value]


def ratio(text: str) -> tuple[Fraction, Fraction] | None:
    """``p:q`` with plain numbers on both sides, else None."""
    parts = text.replace(" ", "").split(":")
    if len(parts) != 2:
        return None
    p, q = plain_number(parts[0]), plain_number(parts[1])
    return None if p is None or q is None else (p, q)


def _same_ratio(a_text: str, g_text: str) -> bool | None:
    """Whether two answers are the same ratio; None when neither side is a ratio.

    ``a:b`` is never a division: ``1:0`` is not ``2:0`` and ``12:00`` (a time) is not
    ``1:00``. With a zero, or a two-digit ``0x`` second part (a clock time), the parts must be
    equal; otherwise ratios are equal when cross products are (``3:5`` is ``6:10``). A ratio
    against a number compares ``a/b``.
    """
    a_r, g_r = ratio(a_text), ratio(g_text)
    if a_r is None and g_r is None:
        return None
    if a_r is not None and g_r is not None:
        clock = any(re.search(r":0\d$", t.replace(" ", "")) for t in (a_text, g_text))
        if clock or 0 in (*a_r, *g_r):
            return a_r == g_r
        return a_r[0] * g_r[1] == a_r[1] * g_r[0]
    r, other = (a_r, g_text) if a_r is not None else (g_r, a_text)
    assert r is not None
    value = plain_number(other)
    if value is None:
        return None if ":" in other else False
    return r[1] != 0 and r[0] / r[1] == value


def choice_letter(text: str) -> str | None:
    """The single option letter of an MCQ answer (``(D)``, ``D.``, ``D) 7``), else None."""
    text = unwrap_text(clean(text)).strip()
    m = _CHOICE.match(text)
    if m is None:
        return None
    rest = text[m.end() :]
    if _OTHER_CHOICE.search(rest):
        return None
    return m.group(1).upper()


def _words(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", unwrap_text(clean(text)).lower())


def _option_text(text: str) -> str:
    """What follows an option's letter (``(C) -3.15 m`` -> ``-3.15m``, signs and points kept),
    ``""`` for a bare letter."""
    text = unwrap_text(clean(text)).strip()
    m = _CHOICE.match(text)
    return squeeze(text[m.end() :].lstrip(" .:)")).lower() if m is not None else ""


def _mcq(answer: str, gold: str) -> Verdict:
    gold_letter = choice_letter(gold)
    if gold_letter is not None and re.match(r"^\(?[A-H]\)?(?:$|[.:)\s])", unwrap_text(clean(gold))):
        same = choice_letter(answer) == gold_letter
        # The right letter with another option's content (``(C) 3.16 m`` for ``(C) 3.15 m``)
        # contradicts itself: when both spell the content out, it must agree.
        texts = (_option_text(answer), _option_text(gold)) if same else ("", "")
        same = same and (not all(texts) or texts[0] == texts[1])
        return accept(STRING_MATCH, STAGE) if same else reject(MISMATCH, STAGE)
    same = _words(answer) == _words(gold) and _words(gold) != ""
    return accept(STRING_MATCH, STAGE) if same else reject(MISMATCH, STAGE)


def _elements(text: str) -> list[str]:
    if (m := _SET_WRAP.match(text)) is not None:
        text = m.group(1)
    return split_top(text, (",", ";", " or ", " and "))


def _number_lists(answer: str, gold: str, rel_tol: float, approx: bool) -> Verdict | None:
    """SET of plain numbers on both sides: compare as sets, decisively."""
    a_items = [plain_number(x) for x in _elements(answer)]
    g_items = [plain_number(x) for x in _elements(gold)]
    a_vals = [x for x in a_items if x is not None]
    g_vals = [x for x in g_items if x is not None]
    if len(a_vals) != len(a_items) or len(g_vals) != len(g_items):
        return None
    covered = all(any(numbers_match(a, g, approx, rel_tol) for g in g_vals) for a in a_vals)
    complete = all(any(numbers_match(a, g, approx, rel_tol) for a in a_vals) for g in g_vals)
    return accept(NUMERIC_MATCH, STAGE) if covered and complete else reject(MISMATCH, STAGE)


def _malformed(a_text: str, g_text: str) -> bool:
    """Whether a shape no later stage may read leniently differs between the two sides.

    A split number (``1 2``) would be joined into one by sympy and math-verify, a number in
    a base (``52_8``) would lose its base to them, and an infinite end's bracket
    (``\\infty]`` vs ``\\infty)``) is lost by sympy's intervals; unless both sides are the
    same string, such a pair is a mismatch.
    """
    if any(p.search(t) for p in (_SPLIT_NUMBER, _BASE_NUMBER) for t in (a_text, g_text)):
        return True
    if "\\infty" not in a_text and "\\infty" not in g_text:
        return False
    ends = [sorted(squeeze(x) for x in _CLOSED_INFINITY.findall(t)) for t in (a_text, g_text)]
    return ends[0] != ends[1]


def half_open(text: str) -> bool:
    """Whether a top-level bracket pair of ``text`` is half-open (``(a,b]``, ``[a,b)``).

    Such a pair is an interval; as a tuple it is malformed, and tuple comparison, which reads
    ``(`` and ``[`` alike, would take ``(4,4\\sqrt{3}]`` for the point ``(4,4\\sqrt{3})``.
    """
    depth, opener = 0, ""
    for ch in text:
        if ch in "([{":
            opener = ch if depth == 0 else opener
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0 and opener + ch in ("(]", "[)"):
                return True
    return False


def fast_check(answer: str, gold: str, schema: AnswerSchema, rel_tol: float) -> Verdict | None:
    """A decisive verdict when a cheap rule settles the pair, else None."""
    if schema is AnswerSchema.MCQ_STRING:
        return _mcq(answer, gold)
    a_text, a_marks = canonical(answer, schema)
    g_text, g_marks = canonical(gold, schema)
    same_text = squeeze(a_text) == squeeze(g_text)
    if not same_text and _malformed(a_text, g_text):
        return reject(MISMATCH, STAGE)
    if a_marks.unit_power and g_marks.unit_power and a_marks.unit_power != g_marks.unit_power:
        return reject(MISMATCH, STAGE)  # ``15 cm^3`` is not ``15 cm^2``
    if schema is AnswerSchema.TUPLE_LIST and not same_text and half_open(a_text + g_text):
        return reject(MISMATCH, STAGE)
    if same_text and (a_marks.percent == g_marks.percent or schema is not AnswerSchema.NUMBER):
        return accept(STRING_MATCH, STAGE)
    # A decimal on either side licenses the relative tolerance: a gold 0.333333 is 1/3.
    approx = "." in a_text or "." in g_text
    if schema is AnswerSchema.NUMBER:
        if (same := _same_ratio(a_text, g_text)) is not None:
            return accept(NUMERIC_MATCH, STAGE) if same else reject(MISMATCH, STAGE)
        a_num, g_num = plain_number(a_text), plain_number(g_text)
        if a_num is None or g_num is None:
            return None
        for a in scaled_candidates(a_num, a_marks, g_marks):
            for g in scaled_candidates(g_num, g_marks, a_marks):
                if numbers_match(a, g, approx, rel_tol):
                    return accept(NUMERIC_MATCH, STAGE)
        if "." not in a_text and rounds_to(a_num, g_text):
            return accept(NUMERIC_MATCH, STAGE)
        return reject(MISMATCH, STAGE)
    if schema is AnswerSchema.SET:
        return _number_lists(a_text, g_text, rel_tol, approx)
    return None
