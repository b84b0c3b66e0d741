"""Strict and flexible extraction of the listener's decision, reported side by side.

Strict accepts only the requested format as the last non-empty line ("Answer: same" or
"Answer: different"). Flexible takes the last "Answer: ..." line anywhere, else the last
standalone word "same"/"different", else a reply that opens with yes/no. A reply neither
can read is *unparsed*: scored wrong and counted separately.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_STRICT = re.compile(r"^\s*answer\s*:\s*(same|different)\s*\.?\s*$", re.IGNORECASE)
_ANSWER_ANYWHERE = re.compile(r"answer\s*:\s*\**\s*(same|different)\b", re.IGNORECASE)
_WORD = re.compile(r"\b(same|different)\b", re.IGNORECASE)
_YES_NO = re.compile(r"^\W*(yes|no)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Extracted:
    """The decision under each rule: True = same, False = different, None = unreadable."""

    strict: bool | None
    flexible: bool | None


def _is_same(word: str) -> bool:
    return word.lower() in ("same", "yes")


def extract(text: str) -> Extracted:
    """Read a listener reply under both rules."""
    lines = [line for line in text.splitlines() if line.strip()]
    strict_match = _STRICT.match(lines[-1]) if lines else None
    strict = _is_same(strict_match.group(1)) if strict_match else None

    flexible: bool | None = None
    if found := _ANSWER_ANYWHERE.findall(text):
        flexible = _is_same(found[-1])
    elif words := _WORD.findall(text):
        flexible = _is_same(words[-1])
    elif opening := _YES_NO.match(text):
        flexible = _is_same(opening.group(1))
    return Extracted(strict=strict, flexible=flexible)
