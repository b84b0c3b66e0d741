"""Bracket-aware scanning of answer strings: top-level splitting and outer-wrapper detection.

Answers mix delimiters freely (``[0,1)`` is an interval, ``\\{(1,2),(3,4)\\}`` a set of tuples),
so depth is counted over every opener and closer regardless of kind. All scans are one linear
pass: a pathological 10,000-deep answer costs microseconds here, never recursion.
"""

from __future__ import annotations

OPENERS = "([{"
CLOSERS = ")]}"


def split_top(text: str, separators: tuple[str, ...]) -> list[str]:
    """Split ``text`` at any of ``separators`` that occur outside every bracket pair."""
    parts: list[str] = []
    depth = 0
    start = 0
    i = 0
    while i < len(text):
        ch = text[i]
        if ch in OPENERS:
            depth += 1
        elif ch in CLOSERS:
            depth -= 1
        elif depth == 0:
            sep = next((s for s in separators if text.startswith(s, i)), None)
            if sep is not None:
                parts.append(text[start:i])
                i += len(sep)
                start = i
                continue
        i += 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


def has_top(text: str, token: str) -> bool:
    """Whether ``token`` occurs outside every bracket pair."""
    return len(split_top(text, (token,))) > 1


def max_depth(text: str) -> int:
    """The deepest bracket nesting in ``text``."""
    depth = best = 0
    for ch in text:
        if ch in OPENERS:
            depth += 1
            best = max(best, depth)
        elif ch in CLOSERS:
            depth -= 1
    return best


def wrapped(text: str) -> tuple[str, str, str] | None:
    """``(opener, inner, closer)`` when the first bracket closes exactly at the last character.

    ``(1,2)`` is wrapped; ``(1,2)\\cup(3,4)`` is not, because the first ``(`` closes early.
    """
    if len(text) < 2 or text[0] not in OPENERS or text[-1] not in CLOSERS:
        return None
    depth = 0
    for i, ch in enumerate(text):
        if ch in OPENERS:
            depth += 1
        elif ch in CLOSERS:
            depth -= 1
            if depth == 0 and i != len(text) - 1:
                return None
    return (text[0], text[1:-1], text[-1])


def unwrap_braces(text: str) -> str:
    """Drop redundant outer ``{...}`` groups (``{{5}}`` -> ``5``), leaving ``\\{...\\}`` alone."""
    while (w := wrapped(text)) is not None and w[0] == "{" and w[2] == "}":
        text = w[1].strip()
    return text
