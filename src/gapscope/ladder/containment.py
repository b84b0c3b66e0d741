"""Milestone answers in the model's own unaided solutions (seed Appendix Q).

If a roadmap captures how a problem is solved, its milestone answers should turn up in the
model's unaided (C1) attempts at *that* problem more often than in attempts at other problems.
The paper measures this on 50 families with 8 attempts each: 13.6-17.2% of milestone-attempt
pairs contain the gold answer against 3.8-5.2% for the cross-problem control, 9.4-12.5% vs
0.8-1.7% for statement-novel answers (those not already in the problem statement), and
milestones the model solves alone appear more often than ones it does not (14.6% vs 0.0% for
Qwen-base).

"Contains" has two meanings here (``Match``):

* ``paper`` (the default): the authors' matcher, ``present()`` in the release's
  ``extended_experiments/e6_trace_and_roadmap/trace_all_pairs_control.py``, written here from
  its definition. A gold answer (stripped) of 1 to 60 characters is found in a text when it
  is a raw substring of it, or its MATH normalisation (:func:`gapscope.ladder.strip_string`)
  is a non-empty substring of the text's, or the gold is a number (commas dropped) equal to
  within 1e-9 to a whitespace token of the text (``$ \\ { }`` read as spaces, the token
  stripped of ``.,;:()[]``). A longer or empty gold is found nowhere, and still counts in
  the pairs (as in the release). It is a substring test: ``2`` is found in ``12`` and in
  ``2024``; that raises the cross-problem control as much as the own rate.
* ``token``: gapscope's stricter token-bounded match of normalised strings:

  - normalising removes ``$``, LaTeX spacing (``\\,`` ``\\!`` ``\\;`` ``\\:`` ``\\ `` ``~``),
    ``\\left``/``\\right``/``\\displaystyle``, and writes ``\\dfrac``/``\\tfrac`` as ``\\frac``;
  - the text is then cut into tokens: a LaTeX command (``\\frac``), a number (``12``,
    ``3.5``), a run of letters (``max``), or any other single non-space character;
    whitespace separates tokens and is dropped; case is kept;
  - an answer is contained in a text when the answer's token sequence occurs as a contiguous
    run of the text's tokens. So ``12`` is found in ``x = 12.`` and ``(12, 5)`` but not in
    ``112``, ``12.5`` or ``120``; ``x`` is found in ``let x = 2`` and ``2x`` but not in
    ``max``. An answer with no token is skipped (counted in ``skipped``).

Both are string containment, not equivalence: ``0.5`` is not found in ``\\frac{1}{2}`` by the
token match (the paper's finds it: its normalisation writes ``0.5`` as ``\\frac{1}{2}``). The
cross-problem control carries the base rate of short answers (``2`` is in most solutions).
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from gapscope.ladder.strip_string import MalformedAnswer, strip_string


class Match(StrEnum):
    """Which "contains" a containment readout uses (module docstring)."""

    PAPER = "paper"
    TOKEN = "token"


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


def contains_token(answer: str, text: str) -> bool:
    """Whether ``answer`` appears in ``text`` as a token-bounded substring after normalising.

    An answer with no token (empty, or only dropped characters) is contained nowhere.
    """
    needle = tokens(answer)
    return bool(needle) and _joined(needle) in _joined(tokens(text))


PAPER_MAX_ANSWER = 60
"""The authors' matcher finds no gold answer longer than this (characters, stripped)."""
_NUMBER_SPACES = str.maketrans({c: " " for c in "$\\{}"})
_NUMBER_STRIP = ".,;:()[]"


class _PaperText:
    """A text as the authors' matcher reads it: raw, normalised (None where the MATH
    normalisation is undefined on it) and the numbers among its tokens, sorted."""

    def __init__(self, text: str) -> None:
        self.raw = text
        try:
            self.stripped: str | None = strip_string(text)
        except MalformedAnswer:
            self.stripped = None
        numbers = []
        for token in text.translate(_NUMBER_SPACES).split():
            value = _number(token.strip(_NUMBER_STRIP))
            if value is not None:
                numbers.append(value)
        self.numbers = sorted(numbers)

    def has(self, gold: str) -> bool:
        """``present(text, gold)`` of the release (module docstring)."""
        gold = gold.strip()
        if not gold or len(gold) > PAPER_MAX_ANSWER:
            return False
        if gold in self.raw:
            return True
        if self.stripped is not None:
            try:
                normalised = strip_string(gold)
            except MalformedAnswer:
                normalised = ""
            if normalised and normalised in self.stripped:
                return True
        value = _number(gold.replace(",", ""))
        if value is None:
            return False
        i = bisect.bisect_left(self.numbers, value - 1e-9)
        while i < len(self.numbers) and self.numbers[i] < value + 1e-9:
            if abs(self.numbers[i] - value) < 1e-9:
                return True
            i += 1
        return False


def _number(text: str) -> float | None:
    """``float(text)`` as Python reads it (``1e3``, ``1_000``, ``inf``), or None; NaN is no
    number here: it equals nothing, as in the release's comparison."""
    try:
        value = float(text)
    except ValueError:
        return None
    return None if value != value else value


def contains_paper(answer: str, text: str) -> bool:
    """Whether the authors' matcher finds ``answer`` in ``text`` (module docstring)."""
    return _PaperText(text).has(answer)


def contains(answer: str, text: str, match: Match = Match.PAPER) -> bool:
    """Whether ``answer`` is in ``text`` under ``match`` (default: the authors' matcher)."""
    return contains_paper(answer, text) if match is Match.PAPER else contains_token(answer, text)


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

    ``match`` names the matcher; ``skipped`` counts milestones the token match skips (their
    answer has no token). The authors' matcher skips none: an answer it cannot find (empty, or
    over 60 characters) stays in the pairs with no hit, as in the release.
    """

    families: int
    attempts: int
    skipped: int
    subsets: dict[str, ContainmentRates]
    match: Match = Match.PAPER


class _PaperIndex:
    """Which attempts the authors' matcher finds each answer in: every attempt is read once
    (raw, normalised, its numbers); each distinct answer is looked for once."""

    def __init__(self, texts: Sequence[str]) -> None:
        self.texts = [_PaperText(text) for text in texts]
        self.found: dict[str, set[int]] = {}

    def containing(self, answer: str) -> set[int]:
        if answer not in self.found:
            self.found[answer] = {i for i, text in enumerate(self.texts) if text.has(answer)}
        return self.found[answer]


class _TokenIndex:
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

    def containing(self, answer: str) -> set[int]:
        """The attempts holding ``answer``'s tokens (searched once per distinct answer)."""
        needle = tokens(answer)
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


def measure_containment(
    families: Sequence[ContainmentFamily], match: Match = Match.PAPER
) -> Containment:
    """Own-problem vs cross-problem containment of every tested milestone's gold answer.

    Own: the answer against each of its family's attempts. Control: the same answer against
    each attempt of every *other* family, so the control sees the same answers and differs
    only in which problem the attempts were solving (the paper's 110 milestones x 49 other
    families x 8 attempts = 43,120 pairs; the release's ``ctrlB_all``). Statement-novel uses
    the same matcher on the parent statement.
    """
    owner: list[int] = []
    texts: list[str] = []
    for f_index, family in enumerate(families):
        owner += [f_index] * len(family.attempts)
        texts += family.attempts
    index: _PaperIndex | _TokenIndex
    if match is Match.PAPER:
        index = _PaperIndex(texts)
    else:
        needles = {tokens(answer) for family in families for answer in family.answers}
        index = _TokenIndex(texts, (n for n in needles if n))
    rates = {name: (0, Rate(0, 0), Rate(0, 0)) for name in SUBSETS}
    skipped = 0
    for f_index, family in enumerate(families):
        own_pairs = len(family.attempts)
        other_pairs = len(texts) - own_pairs
        for answer, alone in zip(family.answers, family.solved_alone, strict=True):
            if match is Match.TOKEN and not tokens(answer):
                skipped += 1
                continue
            found = index.containing(answer)
            own = Rate(sum(owner[i] == f_index for i in found), own_pairs)
            control = Rate(len(found) - own.hits, other_pairs)
            novel = not contains(answer, family.statement, match)
            for name, member in zip(SUBSETS, (True, novel, alone, not alone), strict=True):
                if member:
                    n, o, c = rates[name]
                    rates[name] = (n + 1, o + own, c + control)
    return Containment(
        families=len(families),
        attempts=len(texts),
        skipped=skipped,
        subsets={name: ContainmentRates(n, o, c) for name, (n, o, c) in rates.items()},
        match=match,
    )
