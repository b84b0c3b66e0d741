"""Re-grade released rollouts with the authors' strict cascade and with gapscope's verifier.

A record is ``{"response": ..., "gold": ...}`` (any other fields are kept): a raw model
response and the gold it was graded against. Each gets both verdicts side by side, so a
re-grade of the authors' rollouts shows their solved counts (the strict cascade) and where
gapscope's verifier would count otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from gapscope.ladder.strict_cascade import StrictCascade
from gapscope.verify import Verifier


class RegradeError(ValueError):
    """A record without a response or a gold; names its line."""


@dataclass
class Regrade:
    """Every record with both verdicts, and the counts a reader compares."""

    records: list[dict[str, Any]] = field(default_factory=list)

    def summary(self) -> dict[str, int]:
        authors = [r["authors_label"] == "ACCEPT" for r in self.records]
        ours = [r["gapscope_label"] == "ACCEPT" for r in self.records]
        return {
            "records": len(self.records),
            "authors_accept": sum(authors),
            "gapscope_accept": sum(ours),
            "only_gapscope_accepts": sum(o and not a for a, o in zip(authors, ours, strict=True)),
            "only_authors_accept": sum(a and not o for a, o in zip(authors, ours, strict=True)),
        }


def regrade_pairs(
    rows: Iterable[tuple[int, object]], cascade: StrictCascade, verifier: Verifier
) -> Regrade:
    """Both verdicts for every numbered record; a malformed one is an error naming its line."""
    out = Regrade()
    for line, record in rows:
        if not isinstance(record, dict):
            raise RegradeError(f"line {line}: expected a JSON object")
        response, gold = record.get("response"), record.get("gold")
        if not isinstance(response, str) or not isinstance(gold, str):
            raise RegradeError(f"line {line}: needs string fields 'response' and 'gold'")
        theirs = cascade.check(response, gold)
        ours = verifier.check(response, gold)
        out.records.append(
            record
            | {
                "authors_label": theirs.label,
                "authors_reason": theirs.reason,
                "gapscope_label": "ACCEPT" if ours.accepted else "NOT_ACCEPT",
                "gapscope_reason": ours.reason,
            }
        )
    return out
