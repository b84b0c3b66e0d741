"""The MATH benchmark's answer normalisation (Hendrycks et al.), as OracleLadder's matcher uses it.

OracleLadder's containment matcher (``present()`` in the release's
``extended_experiments/e6_trace_and_roadmap/trace_all_pairs_control.py``) compares a gold
answer and a text after ``strip_string`` from its ``decomposer.verifier.math_reward``, the
MATH normalisation that ``is_equiv`` / ``last_boxed_only_string`` / ``remove_boxed`` come
with. It is written here from that definition, step by step, because the numbers it makes
(the paper's containment rates) depend on its quirks: spaces are removed everywhere, ``=`` with
a short left side keeps only the right side, a ``\\text{ `` unit cut needs exactly one such
unit, and ``0.5`` becomes ``\\frac{1}{2}``.

:func:`strip_string` raises :class:`MalformedAnswer` where the definition fails (two
``\\text{ `` units; a ``\\sqrt`` or ``\\frac`` with nothing after it); the matcher treats that as
"the normalised comparison does not apply", as the release's ``try`` does.
"""

from __future__ import annotations


class MalformedAnswer(ValueError):
    """The normalisation is undefined on this string (see the module docstring)."""


_REMOVED = ("\n", "\\!")
_RENAMED = (
    ("\\\\", "\\"),
    ("tfrac", "frac"),
    ("dfrac", "frac"),
    ("\\left", ""),
    ("\\right", ""),
    ("^{\\circ}", ""),
    ("^\\circ", ""),
    ("\\$", ""),
)


def strip_string(text: str) -> str:
    """``text`` normalised as the MATH grader does before comparing answers."""
    for old in _REMOVED:
        text = text.replace(old, "")
    for old, new in _RENAMED:
        text = text.replace(old, new)
    text = _remove_right_units(text)
    text = text.replace("\\%", "").replace(" .", " 0.").replace("{.", "{0.")
    if not text:
        return text
    if text[0] == ".":
        text = "0" + text
    sides = text.split("=")
    if len(sides) == 2 and len(sides[0]) <= 2:  # "x = 5" -> "5"
        text = sides[1]
    text = _fix_fracs(_fix_sqrt(text).replace(" ", ""))
    if text == "0.5":
        text = "\\frac{1}{2}"
    return _fix_a_slash_b(text)


def _remove_right_units(text: str) -> str:
    """What precedes ``\\text{ `` (a unit); undefined when there are two."""
    if "\\text{ " not in text:
        return text
    parts = text.split("\\text{ ")
    if len(parts) != 2:
        raise MalformedAnswer("more than one \\text{ unit")
    return parts[0]


def _fix_sqrt(text: str) -> str:
    """``\\sqrt3`` -> ``\\sqrt{3}`` (one character taken as the radicand)."""
    first, *rest = text.split("\\sqrt")
    out = [first]
    for part in rest:
        if not part:
            raise MalformedAnswer("\\sqrt with nothing after it")
        out.append("\\sqrt" + (part if part[0] == "{" else "{" + part[0] + "}" + part[1:]))
    return "".join(out)


def _fix_fracs(text: str) -> str:
    """``\\frac12`` -> ``\\frac{1}{2}``, ``\\frac1{2}`` -> ``\\frac{1}{2}``; a ``\\frac``
    followed by fewer than two characters leaves the whole text as it was."""
    first, *rest = text.split("\\frac")
    out = first
    for part in rest:
        if not part:
            raise MalformedAnswer("\\frac with nothing after it")
        out += "\\frac"
        if part[0] == "{":
            out += part
            continue
        if len(part) < 2:
            return text
        a, b, tail = part[0], part[1], part[2:]
        out += "{" + a + "}" + ("{" + b + "}" if b != "{" else b) + tail
    return out


def _fix_a_slash_b(text: str) -> str:
    """``3/4`` -> ``\\frac{3}{4}`` when the text is exactly two integers and a slash."""
    parts = text.split("/")
    if len(parts) != 2:
        return text
    try:
        a, b = int(parts[0]), int(parts[1])
    except ValueError:
        return text
    if text != f"{a}/{b}":
        return text
    return f"\\frac{{{a}}}{{{b}}}"
