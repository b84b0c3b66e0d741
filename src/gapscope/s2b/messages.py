"""Strict and flexible reading of a speaker's message, and whether the listener can use it.

The speaker role asks the model to end its reply with one line ``Message: [t1, ..., tN]``.
Strict accepts only that line as the last non-empty line. Flexible takes the last
``Message: ...`` list anywhere (brackets optional), else the last bracketed list of integers,
else a reply that is nothing but integers. Both readings are then checked against the
episode, because the rule listener can only decode a message with one token per attribute
position, each a token of the vocabulary 1..V:

* ``unparsed`` - no list of integers could be read;
* ``wrong_length`` - a list was read but it does not have one token per position;
* ``out_of_vocab`` - a token is outside 1..V (0, negative, or larger than V).

Any of the three makes the message *malformed*: the listener cannot decide the game (it
counts as lost) and its sync round teaches the listener nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Problem = Literal["unparsed", "wrong_length", "out_of_vocab"]

_INTEGERS = r"-?\d+(?:\s*,\s*-?\d+|\s+-?\d+)*"
_STRICT = re.compile(rf"^\s*message\s*:\s*\[\s*({_INTEGERS})\s*\]\s*\.?\s*$", re.IGNORECASE)
_MESSAGE_ANYWHERE = re.compile(rf"message\s*:\s*\**\s*\[?\s*({_INTEGERS})", re.IGNORECASE)
_BRACKETS = re.compile(rf"\[\s*({_INTEGERS})\s*\]")
_ONLY_INTEGERS = re.compile(rf"^[\s\[\]().]*({_INTEGERS})[\s\[\]().]*$")


@dataclass(frozen=True)
class Reading:
    """One reading of a reply: the tokens found (None if none) and what, if anything, makes
    them unusable. ``message`` is the tokens when the listener can use them."""

    tokens: tuple[int, ...] | None
    problem: Problem | None

    @property
    def message(self) -> tuple[int, ...] | None:
        return self.tokens if self.problem is None else None


@dataclass(frozen=True)
class ReadMessage:
    """A speaker reply under each rule."""

    strict: Reading
    flexible: Reading


def _tokens(group: str) -> tuple[int, ...]:
    return tuple(int(t) for t in re.findall(r"-?\d+", group))


def check(tokens: tuple[int, ...] | None, length: int, vocab_size: int) -> Reading:
    """Whether ``tokens`` is a message the listener can decode (see the module docstring)."""
    if tokens is None:
        return Reading(None, "unparsed")
    if len(tokens) != length:
        return Reading(tokens, "wrong_length")
    if any(not 1 <= t <= vocab_size for t in tokens):
        return Reading(tokens, "out_of_vocab")
    return Reading(tokens, None)


def read_message(text: str, length: int, vocab_size: int) -> ReadMessage:
    """Read a speaker reply under both rules and check each reading against the episode."""
    lines = [line for line in text.splitlines() if line.strip()]
    strict_match = _STRICT.match(lines[-1]) if lines else None
    strict = _tokens(strict_match.group(1)) if strict_match else None

    flexible: tuple[int, ...] | None = None
    if found := _MESSAGE_ANYWHERE.findall(text):
        flexible = _tokens(found[-1])
    elif lists := _BRACKETS.findall(text):
        flexible = _tokens(lists[-1])
    elif bare := _ONLY_INTEGERS.match(text):
        flexible = _tokens(bare.group(1))
    return ReadMessage(
        strict=check(strict, length, vocab_size), flexible=check(flexible, length, vocab_size)
    )


def message_line(tokens: tuple[int, ...]) -> str:
    """The reply line that both rules read: what rule speakers and exemplars write."""
    return "Message: [" + ", ".join(str(t) for t in tokens) + "]"
