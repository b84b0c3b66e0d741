"""Accuracy on the hand-written labelled set: no false accepts, recall of ACCEPT >= 0.97.

``label`` is the flexible verdict (answer boxed, stated or trailing); where a record also has
``strict`` (an unboxed answer), the boxed-only verdict must equal it.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from gapscope.verify import Verifier
from gapscope.verify.schema import AnswerSchema

FIXTURE = Path(__file__).parent / "fixtures" / "verifier_labelled.jsonl"


def _records() -> list[dict[str, str]]:
    return [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]


def test_labelled_set_is_broad() -> None:
    records = _records()
    assert len(records) >= 300
    pairs = Counter((r.get("schema"), r["label"]) for r in records)
    for schema in AnswerSchema:
        assert pairs[(schema.value, "ACCEPT")] and pairs[(schema.value, "NOT_ACCEPT")], schema


def test_labelled_accuracy(verifier: Verifier) -> None:
    records = _records()
    verdicts = verifier.check_many([(r["response"], r["gold"], r.get("schema")) for r in records])
    tp = fp = fn = tn = 0
    misses = []
    for record, verdict in zip(records, verdicts, strict=True):
        if "strict" in record:
            assert verdict.strict is (record["strict"] == "ACCEPT"), (record, verdict)
        truth = record["label"] == "ACCEPT"
        tp += truth and verdict.accepted
        fp += not truth and verdict.accepted
        fn += truth and not verdict.accepted
        tn += not truth and not verdict.accepted
        if truth != verdict.accepted:
            misses.append((record["category"], record["gold"], verdict))
    precision = tp / (tp + fp)
    recall = tp / (tp + fn)
    print(
        f"\nlabelled set: n={len(records)} accuracy={(tp + tn) / len(records):.4f} "
        f"precision={precision:.4f} recall={recall:.4f} misses={misses}"
    )
    assert fp == 0, misses
    assert recall >= 0.97, misses
