"""BLEU of a generated declaration against the ground truth, and TA per BLEU bucket.

The paper's argument against surface similarity: over 70 % of the samples with BLEU 90-100
are semantically wrong (fail TA). The score is sacrebleu's sentence BLEU (the standard
implementation, so a number here means what it means elsewhere): 13a tokenization, mixed
case, exponential smoothing, effective order; ``SIGNATURE`` says so in every report. The
hypothesis is the extracted declaration (empty when the reply had none, which scores 0), the
reference the record's ``target_code``; both are stripped. T2's own evaluator reports a
home-made BLEU-4 (whitespace tokens, no smoothing) averaged per record; that average is
not what the bucket table needs, which is one score per sample.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sacrebleu.metrics.bleu import BLEU

_METRIC = BLEU(effective_order=True)
_METRIC.sentence_score("x", ["x"])  # sacrebleu knows the number of references only after a score
SIGNATURE = str(_METRIC.get_signature())
"""sacrebleu's signature of the configuration used (tokenizer, smoothing, version)."""

BUCKET_WIDTH = 10
BUCKETS = tuple(f"{lo}-{lo + BUCKET_WIDTH}" for lo in range(0, 100, BUCKET_WIDTH))
"""``0-10`` ... ``90-100``: half-open, except the last, which holds 100."""


def sentence_bleu(generated: str | None, reference: str) -> float:
    """BLEU (0-100) of ``generated`` against ``reference``; 0 without a generation."""
    hypothesis = (generated or "").strip()
    if not hypothesis or not reference.strip():
        return 0.0
    score = _METRIC.sentence_score(hypothesis, [reference.strip()]).score
    return min(100.0, max(0.0, float(score)))  # sacrebleu can print 100.00000000000004


def bucket_of(score: float) -> str:
    """The bucket label of a BLEU score (0-100)."""
    return BUCKETS[min(int(score // BUCKET_WIDTH), len(BUCKETS) - 1)]


def ta_by_bleu(pairs: Iterable[tuple[float, bool]]) -> list[dict[str, Any]]:
    """Per BLEU bucket that has samples: samples, TA rate and the share semantically wrong
    (failing TA), from (BLEU, TA) pairs, one per sample."""
    groups: dict[str, list[bool]] = {}
    for score, ta in pairs:
        groups.setdefault(bucket_of(score), []).append(ta)
    return [
        {
            "bleu": label,
            "samples": len(groups[label]),
            "ta": sum(groups[label]) / len(groups[label]),
            "wrong": 1 - sum(groups[label]) / len(groups[label]),
        }
        for label in BUCKETS
        if label in groups
    ]
