"""Milestone answers in the model's own unaided solutions (seed Appendix Q).

If a roadmap captures how a problem is solved, its milestone answers should turn up in the
model's unaided (C1) attempts at *that* problem more often than in attempts at other problems.
The paper measures this on 50 families with 8 attempts each: 13.6-17.2% of milestone-attempt
pairs contain the gold answer against 3.8-5.2% for the cross-problem control, 9.4-12.5% vs
0.8-1.7% for statement-novel answers (those not already in the problem statement), and
milestones the model solves alone appear more often than ones it does not (14.6% vs 0.0% for
Qwen-base).

"Contains" is a token-bounded match of normalised strings, exact and cheap:

* normalising removes ``$``, LaTeX spacing (``\\,`` ``\\!`` ``\\;`` ``\\:`` ``\\ `` ``~``),
  ``\\left``/``\\right``/``\\displaystyle``, and writes ``\\dfrac``/``\\tfrac`` as ``\\frac``;
* the text is then cut into tokens: a LaTeX command (``\\frac``), a number (``12``,
  ``3.5``), a run of letters (``max``), or any other single non-space character; whitespace
  separates tokens and is dropped; case is kept;
* an answer is contained in a text when the answer's token sequence occurs as a contiguous
  run of the text's tokens. So ``12`` is found in ``x = 12.`` and ``(12, 5)`` but not in
  ``112``, ``12.5`` or ``120``; ``x`` is found in ``let x = 2`` and ``2x`` but not in ``max``.

It is string containment, not equivalence: ``0.5`` is not found in ``\\frac{1}{2}``. The
cross-problem control carries the base rate of short answers (``2`` is in most solutions).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

_DROP = re.compile(r"\$|\\[,!;: ]|~|\\left\b|\\right\b|\\displaystyle\b")
_FRAC = re.compile(r"\\[dt]frac\b")
_TOKEN = re.compile(r"\\[A-Za-z]+|\d+(?:\.\d+)?|[A-Za-z]+|\S")
_SEP = "\x00"
"""Joins tokens so that a substring search of joined strings is a token-bounded match; the
tokeniser turns it into a space first, so no token contains it."""


def tokens(text: str) -> tuple[str, ...]:
    """The normalised tokens of ``text`` (rules in the module docstring)."""
    text = _FRAC.sub(r"\\frac", _DROP.sub(" ", text.replace(_SEP, " ")))
    return tuple(_TOKEN.findall(text))


def _joined(toks: Sequence[str]) -> str:
    return _SEP + _SEP.join(toks) + _SEP


def contains(answer: str, text: str) -> bool:
    """Whether ``answer`` appears in ``text`` as a token-bounded substring after normalising.

    An answer with no token (empty, or only dropped characters) is contained nowhere.
    """
    needle = tokens(answer)
    return bool(needle) and _joined(needle) in _joined(tokens(text))


@dataclass(frozen=True)
class ContainmentFamily:
    """What containment needs of one family and one model.

    ``answers`` are the gold answers of the tested milestones (INTEGRATE is withheld: its
    answer is the parent's), ``solved_alone`` whether the model solved each one alone in
    Stage 0, ``attempts`` the model's unaided (C1) completions, ``statement`` the parent
    problem as the model saw it.
    """

    pid: str
    statement: str
    answers: tuple[str, ...]
    solved_alone: tuple[bool, ...]
    attempts: tuple[str, ...]


@dataclass(frozen=True)
class Rate:
    """``hits`` of ``pairs`` milestone-attempt pairs contain the milestone's answer."""

    hits: int
    pairs: int

    @property
    def rate(self) -> float | None:
        return self.hits / self.pairs if self.pairs else None

    def __add__(self, other: Rate) -> Rate:
        return Rate(self.hits + other.hits, self.pairs + other.pairs)


@dataclass(frozen=True)
class ContainmentRates:
    """Own-problem rate and cross-problem control over one subset of milestones."""

    milestones: int
    own: Rate
    control: Rate


SUBSETS = ("all", "statement-novel", "solved alone", "not solved alone")
"""The paper's readouts: every milestone; those whose answer is not in the parent statement;
those the model solves alone in Stage 0, and those it does not."""


@dataclass(frozen=True)
class Containment:
    """Containment of one model's milestone answers in its own and in other C1 attempts.

    ``skipped`` counts milestones whose answer has no token (they cannot be found).
    """

    families: int
    attempts: int
    skipped: int
    subsets: dict[str, ContainmentRates]


class _Index:
    """Which attempts hold which answers, without searching every attempt for every answer.

    Each attempt is tokenised once, and only the answers' own tokens (one-token answers) and
    adjacent token pairs (longer ones) are indexed, so the index stays small however long the
    attempts are. An answer's candidates are the attempts holding all of its pairs; that is
    exact for one and two tokens, and longer answers are then searched in the candidates.
    """

    def __init__(self, texts: Sequence[str], needles: Iterable[tuple[str, ...]]) -> None:
        keys = {key for needle in needles for key in _keys(needle)}
        self.joined: list[str] = []
        self.found: dict[tuple[str, ...], set[int]] = {}
        self.postings: dict[str | tuple[str, str], set[int]] = {key: set() for key in keys}
        for i, text in enumerate(texts):
            toks = tokens(text)
            self.joined.append(_joined(toks))
            found: set[str | tuple[str, str]] = {t for t in toks if t in keys}
            found |= {pair for pair in itertools.pairwise(toks) if pair in keys}
            for key in found:
                self.postings[key].add(i)

    def containing(self, needle: tuple[str, ...]) -> set[int]:
        """The attempts holding ``needle`` (searched once per distinct answer)."""
        if needle not in self.found:
            candidates = set.intersection(*(self.postings[key] for key in _keys(needle)))
            if len(needle) > 2:
                joined = _joined(needle)
                candidates = {i for i in candidates if joined in self.joined[i]}
            self.found[needle] = candidates
        return self.found[needle]


def _keys(needle: tuple[str, ...]) -> list[str | tuple[str, str]]:
    """What the index files an answer under: its token, or its adjacent token pairs."""
    if len(needle) == 1:
        return [needle[0]]
    return list(itertools.pairwise(needle))


def containment(families: Sequence[ContainmentFamily]) -> Containment:
    """Own-problem vs cross-problem containment of every tested milestone's gold answer.

    Own: the answer against each of its family's attempts. Control: the same answer against
    each attempt of every *other* family, so the control sees the same answers and differs
    only in which problem the attempts were solving (the paper's 110 milestones x 49 other
    families x 8 attempts = 43,120 pairs).
    """
    owner: list[int] = []
    texts: list[str] = []
    for f_index, family in enumerate(families):
        owner += [f_index] * len(family.attempts)
        texts += family.attempts
    needles = {tokens(answer) for family in families for answer in family.answers}
    index = _Index(texts, (n for n in needles if n))
    rates = {name: (0, Rate(0, 0), Rate(0, 0)) for name in SUBSETS}
    skipped = 0
    for f_index, family in enumerate(families):
        own_pairs = len(family.attempts)
        other_pairs = len(texts) - own_pairs
        for answer, alone in zip(family.answers, family.solved_alone, strict=True):
            needle = tokens(answer)
            if not needle:
                skipped += 1
                continue
            found = index.containing(needle)
            own = Rate(sum(owner[i] == f_index for i in found), own_pairs)
            control = Rate(len(found) - own.hits, other_pairs)
            novel = not contains(answer, family.statement)
            for name, member in zip(SUBSETS, (True, novel, alone, not alone), strict=True):
                if member:
                    n, o, c = rates[name]
                    rates[name] = (n + 1, o + own, c + control)
    return Containment(
        families=len(families),
        attempts=len(texts),
        skipped=skipped,
        subsets={name: ContainmentRates(n, o, c) for name, (n, o, c) in rates.items()},
    )
