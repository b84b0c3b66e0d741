"""BLEU of answers against the ground truth, and TA per BLEU bucket (the paper's contrast).

The released BLEU (``BleuMetric.T2``) is checked against numbers worked out by hand from its
definition (``ldilab/T2`` ``evaluate_server.py`` ``calculate_bleu``) and, where the released
records are on disk, against a transcription of that definition on pairs made from their
``target_code`` texts.
"""

# ruff: noqa: RUF001  (Lean's double-struck N is meant, not a look-alike letter)

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import pytest
import sacrebleu

from gapscope.t2.bleu import (
    BUCKETS,
    SIGNATURES,
    BleuMetric,
    bucket_of,
    exact_match,
    sentence_bleu,
    ta_by_bleu,
)
from gapscope.t2.rules import Rules, bleu_metric
from tests.environment import SharedData

TARGET = "theorem add_comm' (a b : ℕ) : a + b = b + a := by omega"


def test_sentence_bleu_is_sacrebleus_on_the_stripped_texts() -> None:
    tautology = "theorem add_comm' (a b : ℕ) : a + b = a + b := by omega"
    expected = sacrebleu.sentence_bleu(tautology, [TARGET]).score
    assert sentence_bleu(f"\n{tautology}\n", TARGET) == pytest.approx(expected)
    assert 50 < expected < 90  # one token swapped: high BLEU, another meaning
    assert sentence_bleu(TARGET, TARGET) == 100.0  # clamped (sacrebleu: 100.00000000000004)
    assert sentence_bleu(None, TARGET) == 0.0 and sentence_bleu("  ", TARGET) == 0.0
    assert "tok:13a" in SIGNATURES[BleuMetric.SACREBLEU]
    assert "smooth:exp" in SIGNATURES[BleuMetric.SACREBLEU]


@pytest.mark.parametrize(
    ("hypothesis", "reference", "expected"),
    [
        # all precisions 1, c = 5 < r = 6: BP = exp(1 - 6/5)
        ("a b c d e", "a b c d e f", 100 * math.exp(-0.2)),
        # clipped: 'the' twice against once -> p1 5/6, p2 3/5, p3 2/4, p4 1/3; c = r
        ("the cat sat on the mat", "the cat sat on a mat", 100 * (1 / 12) ** 0.25),
        # longer than the reference: no penalty; p = 6/7, 5/6, 4/5, 3/4
        ("a b c d e f g", "a b c d e f", 100 * (6 / 7 * 5 / 6 * 4 / 5 * 3 / 4) ** 0.25),
        ("a b c d", "a b d c", 0.0),  # no 4-gram in common: no smoothing, 0
        ("x", "x", 0.0),  # one token: no 2-, 3-, 4-gram, a zero precision
        ("a b c", "a b c", 0.0),  # three tokens: no 4-gram
        ("f (x)", "f ( x )", 0.0),  # whitespace tokens: `(x)` is one token
        ("  ", "a b c d", 0.0),
        ("a b c d", "a b c d", 100.0),
    ],
)
def test_released_bleu_equals_hand_computed_values(
    hypothesis: str, reference: str, expected: float
) -> None:
    assert sentence_bleu(hypothesis, reference, BleuMetric.T2) == pytest.approx(expected, abs=1e-9)


def test_the_released_rules_pick_the_released_bleu_and_say_so() -> None:
    assert bleu_metric(Rules.T2) is BleuMetric.T2
    assert bleu_metric(Rules.GAPSCOPE) is BleuMetric.SACREBLEU
    signature = SIGNATURES[BleuMetric.T2]
    assert signature.startswith("nrefs:1|case:mixed|eff:no|tok:none|smooth:none|version:")
    assert sentence_bleu("x", "x", BleuMetric.SACREBLEU) == 100.0  # gapscope's: smoothed


def test_exact_match_compares_stripped_texts() -> None:
    assert exact_match(f"\n{TARGET}  ", TARGET) and not exact_match(None, TARGET)
    assert not exact_match(TARGET.replace("  ", " ").replace(" ", "  "), TARGET)


def test_buckets_are_half_open_tens_with_100_in_the_last() -> None:
    assert BUCKETS[0] == "0-10" and BUCKETS[-1] == "90-100" and len(BUCKETS) == 10
    assert [bucket_of(x) for x in (0.0, 9.99, 10.0, 89.9, 90.0, 100.0)] == [
        "0-10",
        "0-10",
        "10-20",
        "80-90",
        "90-100",
        "90-100",
    ]


def test_ta_by_bleu_counts_the_semantically_wrong_share() -> None:
    pairs = [(95.0, False), (99.0, False), (100.0, True), (93.0, False), (5.0, True)]
    assert ta_by_bleu(pairs) == [
        {"bleu": "0-10", "samples": 1, "ta": 1.0, "wrong": 0.0},
        {"bleu": "90-100", "samples": 4, "ta": 0.25, "wrong": 0.75},
    ]
    assert ta_by_bleu([]) == []


def _definition(prediction: str, reference: str) -> float:
    """``calculate_bleu`` as the release defines it, transcribed from its description."""
    cand, ref = prediction.split(), reference.split()
    if not cand or not ref:
        return 0.0
    logs = []
    for n in range(1, 5):
        grams = Counter(tuple(cand[i : i + n]) for i in range(len(cand) - n + 1))
        ref_grams = Counter(tuple(ref[i : i + n]) for i in range(len(ref) - n + 1))
        total = sum(grams.values())
        clipped = sum(min(c, ref_grams[g]) for g, c in grams.items())
        if not total or not clipped:
            return 0.0
        logs.append(math.log(clipped / total))
    penalty = 1.0 if len(cand) > len(ref) else math.exp(1 - len(ref) / len(cand))
    return 100 * math.exp(sum(logs) / 4) * penalty


def _released_pairs(released: Path) -> list[tuple[str, str]]:
    """Pairs from the released ``target_code`` texts: each against itself, its first half,
    itself with one token dropped, and the next record's target (neighbours share headers)."""
    targets = [
        json.loads(line)["target_code"].strip()
        for name in ("existing_datasets.all.jsonl", "research_papers.prop.jsonl")
        for line in (released / name).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    pairs = []
    for i, ref in enumerate(targets):
        tokens = ref.split()
        half = " ".join(tokens[: max(1, len(tokens) // 2)])
        dropped = " ".join(tokens[:-2] + tokens[-1:]) if len(tokens) > 2 else ref
        pairs += [(ref, ref), (half, ref), (dropped, ref), (targets[(i + 1) % len(targets)], ref)]
    return pairs


def test_t2_rules_buckets_equal_the_released_bleus_on_released_targets(
    shared_data: SharedData,
) -> None:
    pairs = _released_pairs(shared_data("t2/data/final"))
    assert len(pairs) > 600
    metric = bleu_metric(Rules.T2)
    ours = [sentence_bleu(h, r, metric) for h, r in pairs]
    theirs = [_definition(h, r) for h, r in pairs]
    assert ours == pytest.approx(theirs, abs=1e-9)
    flags = [i % 3 == 0 for i in range(len(pairs))]  # any TA pattern: the buckets must agree
    assert ta_by_bleu(zip(ours, flags, strict=True)) == ta_by_bleu(zip(theirs, flags, strict=True))
    # gapscope's BLEU puts many pairs elsewhere: the reason the rules choose
    gapscope = [sentence_bleu(h, r, BleuMetric.SACREBLEU) for h, r in pairs]
    moved = sum(bucket_of(a) != bucket_of(b) for a, b in zip(gapscope, theirs, strict=True))
    assert moved > len(pairs) // 10
