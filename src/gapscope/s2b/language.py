"""How compositional a speaker's messages are: the emergent-language measures of
Chaabouni et al. (2020), over the (meaning, message) pairs one speaker produced.

A meaning is a tuple of latent value indices (one attribute per dimension); a message a tuple
of tokens. All three measures are 1 for a perfectly compositional language of their kind and
near 0 for an unstructured one:

* **topographic similarity** (topsim): the Spearman correlation, over every pair of pairs,
  between the meanings' Hamming distance (how many attributes differ) and the messages'
  distance. The message distance is the edit (Levenshtein) distance by default, as Chaabouni
  et al. use; ``distance="hamming"`` counts differing positions instead (the same for messages
  of one fixed length up to shifts: edit <= Hamming).
* **positional disentanglement** (posdis): for each message position j, the gap between the
  mutual information of the symbol at j with the attribute it informs most and with the
  runner-up, divided by the symbol's entropy; averaged over the positions whose symbol varies
  (a constant position carries no information and is left out).
* **bag-of-symbols disentanglement** (bosdis): the same gap for the *number of times* each
  vocabulary symbol occurs in the message (order ignored), averaged over the symbols whose
  count varies. A code that keeps each attribute in its own symbols scores 1 even if it
  shuffles positions; a positional code that reuses the same tokens at every position does not.

Degenerate inputs get 0, "no structure shown", rather than an undefined value that would
poison a mean over seeds: topsim when either distance is constant (or there are fewer than
two pairs), posdis/bosdis when no position/symbol varies. With a single attribute the
runner-up information is 0. Entropies are in nats; the measures are ratios, so the base
cancels.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Hashable, Sequence
from typing import Literal

Meaning = tuple[int, ...]
Message = tuple[int, ...]
MessageDistance = Literal["edit", "hamming"]


def entropy(values: Sequence[Hashable]) -> float:
    """Shannon entropy (nats) of the empirical distribution of ``values``."""
    n = len(values)
    return -sum(c / n * math.log(c / n) for c in Counter(values).values()) if n else 0.0


def mutual_information(xs: Sequence[Hashable], ys: Sequence[Hashable]) -> float:
    """I(X; Y) = H(X) + H(Y) - H(X, Y) of the paired samples, in nats."""
    return entropy(xs) + entropy(ys) - entropy(list(zip(xs, ys, strict=True)))


def hamming(a: Sequence[int], b: Sequence[int]) -> int:
    """Positions where ``a`` and ``b`` differ; a length difference counts once per position."""
    return sum(x != y for x, y in zip(a, b, strict=False)) + abs(len(a) - len(b))


def edit_distance(a: Sequence[int], b: Sequence[int]) -> int:
    """Levenshtein distance: the fewest insertions, deletions and substitutions from a to b."""
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        current = [i]
        for j, y in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def topsim(
    meanings: Sequence[Meaning],
    messages: Sequence[Message],
    distance: MessageDistance = "edit",
) -> float:
    """Spearman correlation between meaning Hamming and message distances over all pairs."""
    from scipy.stats import spearmanr

    _check_pairs(meanings, messages)
    measure = edit_distance if distance == "edit" else hamming
    pairs = list(itertools.combinations(range(len(meanings)), 2))
    meaning_d = [hamming(meanings[i], meanings[j]) for i, j in pairs]
    message_d = [measure(messages[i], messages[j]) for i, j in pairs]
    if len(pairs) < 2 or len(set(meaning_d)) < 2 or len(set(message_d)) < 2:
        return 0.0
    return float(spearmanr(meaning_d, message_d).statistic)


def _information_gap(attributes: list[list[int]], features: list[list[int]]) -> float:
    """Mean over non-constant features of (best MI - runner-up MI) / H(feature)."""
    gaps = []
    for feature in features:
        h = entropy(feature)
        if h <= 0.0:
            continue
        informs = sorted((mutual_information(feature, a) for a in attributes), reverse=True)
        runner_up = informs[1] if len(informs) > 1 else 0.0
        gaps.append((informs[0] - runner_up) / h)
    return sum(gaps) / len(gaps) if gaps else 0.0


def posdis(meanings: Sequence[Meaning], messages: Sequence[Message]) -> float:
    """Positional disentanglement of messages of one length (see the module docstring)."""
    _check_pairs(meanings, messages)
    if len({len(m) for m in messages}) > 1:
        raise ValueError("posdis needs messages of one length")
    attributes = [list(column) for column in zip(*meanings, strict=True)]
    positions = [list(column) for column in zip(*messages, strict=True)]
    return _information_gap(attributes, positions)


def bosdis(meanings: Sequence[Meaning], messages: Sequence[Message]) -> float:
    """Bag-of-symbols disentanglement: symbol counts instead of positions."""
    _check_pairs(meanings, messages)
    attributes = [list(column) for column in zip(*meanings, strict=True)]
    symbols = sorted({t for m in messages for t in m})
    counts = [Counter(m) for m in messages]
    return _information_gap(attributes, [[c[s] for c in counts] for s in symbols])


def _check_pairs(meanings: Sequence[Meaning], messages: Sequence[Message]) -> None:
    if len(meanings) != len(messages):
        raise ValueError(f"{len(meanings)} meanings but {len(messages)} messages")
