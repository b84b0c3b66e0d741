"""Input bounds checked in the parent before any comparison: a clear verdict instead of a hang.

The parent process runs extraction and the fast paths without a deadline, so what reaches them
must be bounded: a response of at most ``MAX_RESPONSE_CHARS``, an answer or gold of at most
``MAX_ANSWER_CHARS`` and a bracket nesting of at most ``MAX_NESTING``. Values that no computer
algebra system can build (a power tower of integers with millions of digits, ``100000!``) are
refused here too, because the worker would spend its whole deadline trying and a run with many
of them would be paced by the timeout. No real math answer comes near any of these limits.
"""

from __future__ import annotations

import math
import re

from gapscope.verify.split import max_depth
from gapscope.verify.verdict import TOO_COMPLEX, TOO_LARGE, Verdict, reject

STAGE = "limits"
MAX_RESPONSE_CHARS = 1_000_000
MAX_ANSWER_CHARS = 10_000
MAX_NESTING = 64
MAX_VALUE_DIGITS = 100_000

_TOWER = re.compile(r"^\s*\d+(?:\s*\^\s*\{?\s*\d+)+\s*\}*\s*$")
_FACTORIAL = re.compile(r"(?<!\d)(\d+)\s*!")  # the lookbehind keeps it linear


def _tower_digits(text: str) -> float:
    """Decimal digits of an integer power tower such as ``9^{9^{9^9}}`` (inf when huge)."""
    bases = [int(x) for x in re.findall(r"\d+", text[:200])]
    value = float(bases[-1])
    digits = math.log10(value) if value > 0 else 0.0
    for base in reversed(bases[:-1]):
        if value == math.inf:
            return math.inf
        if base <= 1:
            value, digits = float(base), 0.0
            continue
        digits = value * math.log10(base)
        if digits > MAX_VALUE_DIGITS:
            return math.inf
        value = float(base) ** value if digits < 300 else math.inf
    return digits


def _too_large(text: str) -> bool:
    if _TOWER.match(text) and _tower_digits(text) > MAX_VALUE_DIGITS:
        return True
    return any(len(m.group(1)) > 4 for m in _FACTORIAL.finditer(text))


def screen_response(response: str) -> Verdict | None:
    """A NOT_ACCEPT verdict when the response is too long to scan, else None."""
    if len(response) > MAX_RESPONSE_CHARS:
        return reject(TOO_LARGE, STAGE)
    return None


def screen_pair(answer: str, gold: str) -> Verdict | None:
    """A NOT_ACCEPT verdict when the pair exceeds a bound, else None (go on comparing)."""
    for text in (answer, gold):
        if len(text) > MAX_ANSWER_CHARS or _too_large(text):
            return reject(TOO_LARGE, STAGE)
        if max_depth(text) > MAX_NESTING:
            return reject(TOO_COMPLEX, STAGE)
    return None
