"""The evidence one comparison gives (symbolic, numeric, no, unknown) and how it combines.

Symbolic comparison is not a boolean: sympy may prove equality ("symbolic"), random-point
evaluation may only support it ("numeric"), a counterexample refutes it ("no"), or nothing can
be concluded ("unknown", which hands the pair to the next cascade stage). Keeping the four apart
is what lets the cascade be decisive where it can and defer where it must.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Literal, TypeVar

Evidence = Literal["symbolic", "numeric", "no", "unknown"]
YES: tuple[Evidence, ...] = ("symbolic", "numeric")
T = TypeVar("T")
U = TypeVar("U")


def all_of(outcomes: Iterable[Evidence]) -> Evidence:
    """Conjunction: stops at the first refutation."""
    result: Evidence = "symbolic"
    for outcome in outcomes:
        if outcome == "no":
            return "no"
        if outcome == "unknown" or (outcome == "numeric" and result == "symbolic"):
            result = outcome
    return result


def any_of(outcomes: Iterable[Evidence]) -> Evidence:
    """Disjunction: stops at the first proof."""
    result: Evidence = "no"
    for outcome in outcomes:
        if outcome == "symbolic":
            return "symbolic"
        if outcome == "numeric" or (outcome == "unknown" and result == "no"):
            result = outcome
    return result


def bag_match(answers: Sequence[T], golds: Sequence[U], eq: Callable[[T, U], Evidence]) -> Evidence:
    """Order- and multiplicity-insensitive match: every element on each side has a partner."""
    if not answers or not golds:
        return "symbolic" if not answers and not golds else "no"
    memo: dict[tuple[int, int], Evidence] = {}

    def pair(i: int, j: int) -> Evidence:
        if (i, j) not in memo:
            memo[(i, j)] = eq(answers[i], golds[j])
        return memo[(i, j)]

    covered = all_of(any_of(pair(i, j) for j in range(len(golds))) for i in range(len(answers)))
    if covered == "no":
        return "no"
    complete = all_of(any_of(pair(i, j) for i in range(len(answers))) for j in range(len(golds)))
    return all_of((covered, complete))
