"""Verifier throughput and accuracy on the labelled set vs math-verify alone, same run.

Ours: warm pool, cache cleared before every repetition (so this is not a cache benchmark);
the cached rate is reported separately. Baseline: ``math_verify.verify(parse(gold),
parse(extracted_or_response))`` with its default (SIGALRM) timeouts, in the main thread.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

from math_verify import parse, verify

from gapscope.verify import Verifier, extract_boxed

FIXTURE = Path(__file__).parent.parent / "tests" / "ladder" / "fixtures" / "verifier_labelled.jsonl"


def _accuracy(predicted: list[bool], truth: list[bool]) -> float:
    return sum(p == t for p, t in zip(predicted, truth, strict=True)) / len(truth)


def main(repetitions: int = 3) -> dict[str, Any]:
    """Measure both verifiers on the labelled set and print the result."""
    logging.getLogger("math_verify").setLevel(logging.CRITICAL)
    records = [json.loads(x) for x in FIXTURE.read_text(encoding="utf-8").splitlines()]
    truth = [r["label"] == "ACCEPT" for r in records]
    items = [(r["response"], r["gold"], r.get("schema")) for r in records]
    with Verifier() as verifier:
        start = time.perf_counter()
        for _ in range(repetitions):
            verifier.cache_clear()
            ours = verifier.check_many(items)
        ours_s = (time.perf_counter() - start) / repetitions
        start = time.perf_counter()
        verifier.check_many(items)
        cached_s = time.perf_counter() - start
    start = time.perf_counter()
    baseline = []
    for response, gold, _ in items:
        boxed = extract_boxed(response)
        target = response if boxed is None else "\\boxed{" + boxed + "}"
        baseline.append(bool(verify(parse("\\boxed{" + gold + "}"), parse(target))))
    base_s = time.perf_counter() - start
    result = {
        "n": len(records),
        "ours_answers_per_s": round(len(items) / ours_s, 1),
        "ours_cached_answers_per_s": round(len(items) / cached_s, 1),
        "ours_accuracy": round(_accuracy([v.accepted for v in ours], truth), 4),
        "ours_false_accepts": sum(v.accepted and not t for v, t in zip(ours, truth, strict=True)),
        "math_verify_answers_per_s": round(len(items) / base_s, 1),
        "math_verify_accuracy": round(_accuracy(baseline, truth), 4),
        "math_verify_false_accepts": sum(b and not t for b, t in zip(baseline, truth, strict=True)),
        "speedup": round(base_s / ours_s, 2),
    }
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
