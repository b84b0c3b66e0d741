"""ZSCT and adj-ZSCT on a 0-100 scale, per episode and over seeds.

ZSCT is the listener's accuracy on the held-out query games. Because a same/different decision
has a 50% guessing floor, adj-ZSCT = max(0, 2 * ZSCT - 100) maps it onto ability above chance.

Over seeds the headline is adj(mean ZSCT), as the seed reports it (its Table 1 pairs 57.9 with
15.8 = 2 * 57.9 - 100). Averaging per-episode adj values instead would clip every below-chance
episode to 0 first and so report ability where there is none (four coin-flip episodes at
50/50/30/70 would give 10 instead of 0).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

SCORE_KEYS = ("zsct", "adj_zsct", "zsct_strict", "adj_zsct_strict", "unparsed", "support_acc")
"""What the ZSCT scorer records per episode (and the analysis reads back)."""
LANGUAGE_KEYS = ("topsim", "posdis", "bosdis")
"""The emergent-language measures of the speaker's messages (:mod:`gapscope.s2b.language`)."""
SPEAKER_SCORE_KEYS = (
    "zsct",
    "adj_zsct",
    "zsct_strict",
    "adj_zsct_strict",
    "malformed",
    "support_acc",
    *LANGUAGE_KEYS,
)
"""What the constructivity scorer records per episode (``role=speaker``): the rule
listener's ZSCT on the speaker's query messages, the share of malformed messages (%), and the
language measures."""


def adj_zsct(zsct: float) -> float:
    """Ability above the 50% guessing floor, in [0, 100]."""
    if not 0.0 <= zsct <= 100.0:
        raise ValueError(f"zsct must be a percentage in [0, 100], got {zsct}")
    return max(0.0, 2.0 * zsct - 100.0)


def accuracy_percent(correct: Sequence[bool]) -> float:
    """Share of True in ``correct`` on a 0-100 scale (0 for an empty sequence)."""
    return 100.0 * sum(correct) / len(correct) if correct else 0.0


@dataclass(frozen=True)
class SeedSummary:
    """Mean and sample standard deviation of a metric over seeds (sd = 0 for one seed)."""

    mean: float
    sd: float
    n: int

    @classmethod
    def of(cls, values: Sequence[float]) -> SeedSummary:
        if not values:
            raise ValueError("no seeds to summarize")
        sd = statistics.stdev(values) if len(values) > 1 else 0.0
        return cls(mean=statistics.fmean(values), sd=sd, n=len(values))

    def adjusted(self) -> SeedSummary:
        """The adj-ZSCT summary of a ZSCT summary: mean adj(mean ZSCT); sd 2 * sd(ZSCT), the
        spread of the unclipped map 2 * ZSCT - 100 over seeds."""
        return SeedSummary(mean=adj_zsct(self.mean), sd=2.0 * self.sd, n=self.n)

    def __str__(self) -> str:
        return f"{self.mean:.1f} ± {self.sd:.1f}"


def beyond_context(records: list[dict[str, Any]]) -> list[int]:
    """Indices of the games the model could not answer: the conversation outgrew its context
    window (they count as unparsed, and wrong, like any reply without a decision)."""
    return [r["index"] for r in records if r.get("stop_reason") == "model_length"]
