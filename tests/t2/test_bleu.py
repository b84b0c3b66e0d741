"""BLEU of answers against the ground truth, and TA per BLEU bucket (the paper's contrast)."""

# ruff: noqa: RUF001  (Lean's double-struck N is meant, not a look-alike letter)

from __future__ import annotations

import pytest
import sacrebleu

from gapscope.t2.bleu import BUCKETS, SIGNATURE, bucket_of, sentence_bleu, ta_by_bleu

TARGET = "theorem add_comm' (a b : ℕ) : a + b = b + a := by omega"


def test_sentence_bleu_is_sacrebleus_on_the_stripped_texts() -> None:
    tautology = "theorem add_comm' (a b : ℕ) : a + b = a + b := by omega"
    expected = sacrebleu.sentence_bleu(tautology, [TARGET]).score
    assert sentence_bleu(f"\n{tautology}\n", TARGET) == pytest.approx(expected)
    assert 50 < expected < 90  # one token swapped: high BLEU, another meaning
    assert sentence_bleu(TARGET, TARGET) == 100.0  # clamped (sacrebleu: 100.00000000000004)
    assert sentence_bleu(None, TARGET) == 0.0 and sentence_bleu("  ", TARGET) == 0.0
    assert "tok:13a" in SIGNATURE and "smooth:exp" in SIGNATURE


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
