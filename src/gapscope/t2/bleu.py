"""BLEU of a generated declaration against the ground truth, and TA per BLEU bucket.

The paper's argument against surface similarity: over 70 % of the samples with BLEU 90-100
are semantically wrong (fail TA). Two sentence BLEUs are offered, both through sacrebleu
(one implementation, its signature printed with every table):

- ``t2``: the released evaluator's BLEU (``ldilab/T2``, ``src/evaluations/evaluate_server.py``,
  ``calculate_bleu``): BLEU-4 on whitespace tokens, clipped n-gram precisions, no smoothing
  (any zero precision makes the score 0), the brevity penalty, times 100. sacrebleu computes
  the same with ``tokenize="none"`` (it splits on whitespace), ``smooth_method="none"`` and
  ``effective_order=False``: signature ``nrefs:1|case:mixed|eff:no|tok:none|smooth:none``.
  A hypothesis of fewer than four tokens has no 4-gram, hence a zero precision: ``x`` against
  ``x`` scores 0. The bucket numbers of ``--rules t2`` are made with it, so they sit beside
  the paper's.
- ``sacrebleu``: sacrebleu's sentence BLEU as usually reported (13a tokenisation, which
  splits ``(a`` into ``(`` ``a`` - code's punctuation counts as tokens - exponential
  smoothing and effective order, so a short declaration that is right scores 100, not 0).
  gapscope's rules use it: its buckets say more about code that differs by a bracket.

The hypothesis is the extracted declaration (empty when the reply had none, which scores 0),
the reference the record's ``target_code``; both are stripped. T2's exact match (the
stripped texts are equal) is here too: the released evaluator reports it beside its BLEU.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Any

from sacrebleu.metrics.bleu import BLEU


class BleuMetric(StrEnum):
    """Which sentence BLEU made a score (see the module docstring)."""

    T2 = "t2"
    SACREBLEU = "sacrebleu"


_METRICS = {
    BleuMetric.T2: BLEU(tokenize="none", smooth_method="none", effective_order=False),
    BleuMetric.SACREBLEU: BLEU(effective_order=True),
}
for _metric in _METRICS.values():  # sacrebleu knows the number of references only after a score
    _metric.corpus_score(["x"], [["x"]])
SIGNATURES = {kind: str(metric.get_signature()) for kind, metric in _METRICS.items()}
"""sacrebleu's signature of each configuration (tokenizer, smoothing, version)."""

BUCKET_WIDTH = 10
BUCKETS = tuple(f"{lo}-{lo + BUCKET_WIDTH}" for lo in range(0, 100, BUCKET_WIDTH))
"""``0-10`` ... ``90-100``: half-open, except the last, which holds 100."""


def sentence_bleu(
    generated: str | None, reference: str, metric: BleuMetric = BleuMetric.SACREBLEU
) -> float:
    """BLEU (0-100) of ``generated`` against ``reference`` under ``metric``; 0 without a
    generation or a reference."""
    hypothesis = (generated or "").strip()
    reference = reference.strip()
    if not hypothesis or not reference:
        return 0.0
    # corpus_score of one pair is the sentence score, without sentence_score's warning that
    # effective order is off (the released BLEU has it off on purpose)
    score = _METRICS[metric].corpus_score([hypothesis], [[reference]]).score
    return min(100.0, max(0.0, float(score)))  # sacrebleu can print 100.00000000000004


def exact_match(generated: str | None, reference: str) -> bool:
    """T2's exact match: the stripped texts are equal."""
    return (generated or "").strip() == reference.strip()


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
