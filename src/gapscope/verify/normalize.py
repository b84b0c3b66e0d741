"""String normalisation shared by the fast paths, schema inference and the symbolic stage.

Two answers that differ only in typesetting (``\\dfrac`` vs ``\\frac``, ``\\left(``, spacing,
``\\text{}`` wrappers, a trailing period) should meet as equal strings, so most correct answers
never reach sympy. Normalisation is schema-aware where the notation is ambiguous: ``1,000`` is
one thousand only for a NUMBER, and a bare ``m`` is a unit only after a number in a NUMBER.
Every rule is a regex or a linear scan, so it is safe to run in the parent process.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from fractions import Fraction

from gapscope.verify.schema import AnswerSchema
from gapscope.verify.split import split_top, unwrap_braces

_DELIMITERS = re.compile(r"^\s*(\$\$?|\\\(|\\\[)(.*?)(\$\$?|\\\)|\\\])\s*$", re.DOTALL)
_SIMPLE = [
    (re.compile(r"\\left\s*\.|\\right\s*\."), ""),
    (re.compile(r"\\(?:left|right|bigl|bigr|Bigl|Bigr|big|Big)(?![a-zA-Z])"), ""),
    (re.compile(r"\\(?:displaystyle|textstyle|scriptstyle)(?![a-zA-Z])"), ""),
    (re.compile(r"\\[dt]frac(?![a-zA-Z])"), r"\\frac"),
    (re.compile(r"\\dbinom(?![a-zA-Z])"), r"\\binom"),
    (re.compile(r"\\(?:leqslant|leq|le)(?![a-zA-Z])|≤|<="), r"\\le "),
    (re.compile(r"\\(?:geqslant|geq|ge)(?![a-zA-Z])|≥|>="), r"\\ge "),
    (re.compile(r"\\(?:neq|ne)(?![a-zA-Z])|≠|!="), r"\\ne "),
    (re.compile(r"\\lt(?![a-zA-Z])"), "<"),
    (re.compile(r"\\gt(?![a-zA-Z])"), ">"),
    (re.compile(r"\\(?:langle)(?![a-zA-Z])|⟨"), "("),
    (re.compile(r"\\(?:rangle)(?![a-zA-Z])|⟩"), ")"),
    (re.compile(r"\\varnothing(?![a-zA-Z])|∅"), r"\\emptyset "),
    (re.compile(r"\{,\}|,\s*\\!\s*"), ","),  # ``1{,}000`` and ``11,\\! 111``: thousands
    (re.compile(r"(?<!\\)\\[,!]|\\thinspace"), ""),
    # ``\\quadx_2`` (no space) still means a quad: no macro starts with "quad".
    (re.compile(r"\\q?quad|(?<!\\)\\[;: ]|~"), " "),
    (re.compile(r"\\\$"), ""),
    (re.compile(r"(?<=[A-Za-z])_\{\}"), ""),
    (re.compile(r"_\{(\w)\}"), r"_\1"),  # ``x_{1}`` is ``x_1``, ``4210_{5}`` is ``4210_5``
    (re.compile("\u2212"), "-"),
    (re.compile(r"·"), r"\\cdot "),
    (re.compile("\u00d7"), r"\\times "),
    (re.compile(r"π"), r"\\pi "),
    (re.compile(r"∞"), r"\\infty "),
]
_GROUP = r"\{(?:[^{}]|\{[^{}]*\})*\}"  # a brace group, one level of nesting inside
# Colour changes only the look (``\\color{red}{7}`` is 7; the group after it stays a group); a
# phantom is blank space the size of its content (``3\\phantom{4}`` reads 3).
_INVISIBLE = re.compile(r"\\(?:color|textcolor)\s*\{[^{}]*\}|\\[hv]?phantom\s*" + _GROUP)
_SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁽⁾"
_SUPERSCRIPT_RUN = re.compile(f"[{_SUPERSCRIPTS}]+")
_FROM_SUPERSCRIPT = str.maketrans(_SUPERSCRIPTS, "0123456789+-()")
_CASES = re.compile(r"\\begin\{cases\}(.*?)\\end\{cases\}", re.DOTALL)
_TEXT_WRAPPER = re.compile(
    r"\\(?:text|textnormal|textbf|textit|textrm|mathrm|mathbf|mathit|mbox|rm|bf|operatorname\*?)\s*\{([^{}]*)\}"
)
_MALFORMED = [
    (re.compile(r"\\frac\s*(\d)\s*(\d)"), r"\\frac{\1}{\2}"),
    (re.compile(r"\\frac\s*(\d)\s*\{"), r"\\frac{\1}{"),
    (re.compile(r"\\frac\s*(\{[^{}]*\})\s*(\d)"), r"\\frac\1{\2}"),
    (re.compile(r"\\sqrt\s*(\d)"), r"\\sqrt{\1}"),
]
_DEGREE = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|\\circ(?![a-zA-Z])|°|\\degree(?![a-zA-Z])")
_PERCENT = re.compile(r"\\?%")
_UNIT_WORDS = (
    r"(?:cm|mm|km|m|kg|g|mg|s|sec|seconds?|min|minutes?|h|hrs?|hours?|days?|weeks?|years?|"
    r"degrees?|units?|square\s+units|sq\s+units|meters?|metres?|dollars?|cents?|inch(?:es)?|"
    r"feet|foot|ft|mph|km/h|m/s|l|ml|liters?|litres?|pounds?|lbs?|rad|radians?|"
    r"cubic\s+units|people|students|ways|times|points|miles?)"
)
_WRAPPED_UNIT = re.compile(
    r"\s*\\(?:text|textnormal|mathrm|mbox|rm|textrm)\s*\{\s*"
    + _UNIT_WORDS
    + r"\s*\}(?:\^\{?[23]\}?)?$"
)
_UNIT_POWER = re.compile(r"\^\{?([23])\}?$")
_BARE_UNIT = re.compile(r"(?<=[\d}\s.])\s*" + _UNIT_WORDS + r"(?:\^\{?[23]\}?)?$")
_THOUSANDS = re.compile(r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?![\d,])")
# ``1 000 000``: digit groups of three after a space, the SI way of writing thousands.
_SPACED_THOUSANDS = re.compile(r"(?<![\d.,])\d{1,3}(?: \d{3})+(?![\d,]| \d)")
# ``0.\\overline{3}``, ``0.1\\overline{6}``: a repeating decimal, exactly a fraction.
_REPEATING = re.compile(r"(?<![\d.])(\d*)\.(\d*)\\(?:overline|bar)\s*\{(\d+)\}")
# Whitespace between two digits: ``1 2`` is two numbers, never twelve.
_SPACE_OFF_DIGITS = re.compile(r"(?<!\d) +| +(?!\d)")
_MIXED = re.compile(r"(?:(?<=^)|(?<=[\s,=(]))(-?)(\d+)\s*\\frac\{(\d+)\}\{(\d+)\}(?=$|[\s,)])")
_SIMPLE_NAME = (
    r"(?:[A-Za-z]|\\(?:alpha|beta|gamma|theta|phi|varphi|lambda|mu|omega))(?:_\{?\w*\}?)?"
)
_ASSIGNMENT = re.compile(r"^\s*" + _SIMPLE_NAME + r"\s*\\in(?![a-zA-Z])\s*(.+)$", re.DOTALL)
_NAME = r"(?:[A-Za-z]+|\\[a-zA-Z]+)(?:_\{?\w+\}?|')*"
# What may stand left of ``=`` as a mere name for the value: ``x``, ``AB``, ``V_1:V_2``,
# ``|AB|``, ``\\angle DEM``, ``\\frac{AN}{NC}``, ``f(x)``, ``\\overline{AB}``.
_LABEL = re.compile(
    rf"^(?:{_NAME}(?:\s*:\s*{_NAME})*|\|\s*{_NAME}\s*\||\\angle\s*{_NAME}"
    rf"|\\(?:overline|widehat|hat|vec)\s*\{{\s*{_NAME}\s*\}}"
    rf"|\\frac\{{\s*{_NAME}\s*\}}\{{\s*{_NAME}\s*\}}|{_NAME}\([^()=]*\))$"
)
_CHAIN = re.compile(r"^([^<>]+?)(<|\\le )([^<>]+?)(<|\\le )([^<>]+)$")
_CALL = re.compile(r"^[A-Za-z]\([^()]*\)$")
_VARIABLE = re.compile(rf"^{_SIMPLE_NAME}$")


def is_label(text: str) -> bool:
    """Whether ``text`` only names the value on the other side of ``=`` (see ``_LABEL``)."""
    return _LABEL.match(text.strip()) is not None


def is_variable(text: str) -> bool:
    """Whether ``text`` is one plain variable (``x``, ``y_1``, ``\\theta``)."""
    return _VARIABLE.match(text.strip()) is not None


@dataclass(frozen=True, slots=True)
class Marks:
    """Annotations removed from an answer that still matter when comparing it."""

    degree: bool = False
    percent: bool = False
    unit_power: str = ""  # ``2`` for a stripped ``cm^2``: square units are not cubic ones


def _system(match: re.Match[str]) -> str:
    """A ``cases`` block of equations as a comma-separated system; piecewise ones unchanged."""
    rows = [r.strip() for r in match.group(1).split("\\\\") if r.strip()]
    if rows and all("&" not in r and "=" in r for r in rows):
        return ", ".join(rows)
    return match.group(0)


def superscripts(text: str) -> str:
    """``x²`` -> ``x^{2}``, ``10⁻³`` -> ``10^{-3}``: Unicode superscripts as LaTeX powers."""
    return _SUPERSCRIPT_RUN.sub(
        lambda m: "^{" + m.group(0).translate(_FROM_SUPERSCRIPT) + "}", text
    )


def clean(text: str) -> str:
    """Schema-independent typesetting cleanup; the result is a canonical LaTeX string."""
    text = text.strip()
    if (m := _DELIMITERS.match(text)) is not None:
        text = m.group(2)
    text = superscripts(_INVISIBLE.sub("", text))
    text = _CASES.sub(_system, text)
    for pattern, repl in _SIMPLE:
        text = pattern.sub(repl, text)
    for pattern, repl in _MALFORMED:
        text = pattern.sub(repl, text)
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s*\\text\s*\{\s*(or|and)\s*\}\s*", r" \1 ", text)
    text = text.rstrip(" .;")
    return unwrap_braces(text)


def unwrap_text(text: str) -> str:
    """Replace ``\\text{X}``-style wrappers by their content (innermost first)."""
    while (new := _TEXT_WRAPPER.sub(r"\1", text)) != text:
        text = new
    return re.sub(r"\s+", " ", text).strip()


def strip_units(text: str, bare: bool) -> str:
    """Drop trailing units: wrapped ones (``\\mathrm{~cm}``) always, bare words if ``bare``."""
    while (new := _WRAPPED_UNIT.sub("", text).strip()) != text and new:
        text = new
    if bare and (new := _BARE_UNIT.sub("", text).strip()) and new != text:
        text = new
    return text


def _stripped_power(before: str, after: str) -> str:
    """The exponent of the unit ``strip_units`` removed (``cm^2`` -> ``2``), else ``""``."""
    power = _UNIT_POWER.search(before) if after != before else None
    return power.group(1) if power is not None else ""


def strip_marks(text: str) -> tuple[str, Marks]:
    """Remove degree and percent signs, remembering that they were there."""
    degree = _DEGREE.search(text) is not None
    text = _DEGREE.sub("", text)
    percent = _PERCENT.search(text) is not None
    text = _PERCENT.sub("", text)
    return text.strip(), Marks(degree=degree, percent=percent)


def drop_thousands(text: str) -> str:
    """``1,000,000`` or ``1 000 000`` -> ``1000000``; only where the schema says it is a number.

    Any other space between digits stays (``1 2`` is not twelve, see ``squeeze``).
    """
    text = _SPACED_THOUSANDS.sub(lambda m: m.group(0).replace(" ", ""), text)
    return _THOUSANDS.sub(lambda m: m.group(0).replace(",", ""), text)


def squeeze(text: str) -> str:
    """``text`` without its spaces, except those between two digits (``1 2`` stays two numbers).

    Typesetting spaces mean nothing (``\\frac{1}{2} x`` is ``\\frac{1}{2}x``), but deleting
    the space in ``\\boxed{1 2}`` would make it the number 12. Thousands written with a thin
    space (``1\\,000``) are joined by ``clean`` before this runs.
    """
    return _SPACE_OFF_DIGITS.sub("", text)


def repeating_decimals(text: str) -> str:
    """``0.\\overline{3}`` -> ``\\frac{1}{3}``, ``0.\\overline{9}`` -> ``1``: the exact value.

    The fraction is exact, so the comparison that follows grants no decimal tolerance.
    """

    def repl(m: re.Match[str]) -> str:
        whole, fixed, period = m.group(1), m.group(2), m.group(3)
        shift = 10 ** len(fixed)
        value = Fraction(int(whole or "0")) + Fraction(int(fixed or "0"), shift)
        value += Fraction(int(period), (10 ** len(period) - 1) * shift)
        if value.denominator == 1:
            return str(value.numerator)
        return f"\\frac{{{value.numerator}}}{{{value.denominator}}}"

    return _REPEATING.sub(repl, text)


def mixed_numbers(text: str) -> str:
    """``2\\frac{1}{4}`` -> ``\\frac{9}{4}`` where the fraction is proper and stands alone.

    A proper fraction right after a standalone integer is how people write mixed numbers;
    ``2\\frac{5}{4}`` or ``x2\\frac14`` are left alone because there the reading is a product.
    """

    def repl(m: re.Match[str]) -> str:
        sign, whole, num, den = m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4))
        if not 0 < num < den:
            return m.group(0)
        return f"{sign}\\frac{{{whole * den + num}}}{{{den}}}"

    return _MIXED.sub(repl, text)


def strip_assignment(text: str) -> str:
    """``x = 5`` -> ``5``, ``|AB| = 1`` -> ``1``, ``x \\in (1,2]`` -> ``(1,2]``: drop a label.

    Chains (``x = y = 3``) are kept whole: there the left side is part of the answer.
    """
    if (m := _ASSIGNMENT.match(text)) is not None:
        return m.group(1).strip()
    sides = split_top(text, ("=",))
    if len(sides) == 2 and sides[1] and is_label(sides[0]):
        return sides[1]
    return text


def function_chain(text: str) -> str:
    """``0<f(x)<1`` -> ``0< x <1``: a chained bound on a function value is an interval."""
    m = _CHAIN.match(text)
    if m is None or not _CALL.match(m.group(3).strip()):
        return text
    return f"{m.group(1)}{m.group(2)} x {m.group(4)}{m.group(5)}"


def canonical(text: str, schema: AnswerSchema) -> tuple[str, Marks]:
    """The comparison form of an answer under ``schema`` plus the marks stripped from it."""
    text = clean(text)
    if schema is AnswerSchema.MCQ_STRING:
        return unwrap_text(text), Marks()
    unitless = strip_units(text, bare=schema is AnswerSchema.NUMBER)
    power = _stripped_power(text, unitless)
    text, marks = strip_marks(unwrap_text(unitless))
    if schema in (AnswerSchema.NUMBER, AnswerSchema.EXPR):
        text = strip_assignment(text)
        if schema is AnswerSchema.NUMBER:
            numeric = drop_thousands(text)
            text = strip_units(numeric, bare=True)
            power = power or _stripped_power(numeric, text)
    if power:
        marks = replace(marks, unit_power=power)
    if schema in (AnswerSchema.INEQUALITY, AnswerSchema.INTERVAL):
        text = function_chain(text)
    text = mixed_numbers(repeating_decimals(text))
    return unwrap_braces(text.rstrip(" .")), marks
