"""Steering costs on the embedded model, each against a same-run baseline.

* overhead: generated tokens/s with a steering vector on the last quarter of the layers
  versus unsteered, same prompts, at batch 1 (one request per call) and batch 8 (one call of
  eight); target: overhead < 5 %. KV reuse is off so both sides compute the same prefill, and
  every reply decodes exactly MAX_TOKENS steps (``ignore_eos``) so both do the same work.
* extraction: trace pairs/s when the 4 pairs of one demo episode (8 traces) share a forward
  pass versus one pair (its two traces) per forward pass. Sized for a 2-core CPU; on a GPU
  raise ``seeds`` for a steadier number. A goal (batched at least as fast), not gated: on a
  2-core CPU batching buys no parallelism and padding adds work (0.63x in docs/steering.md);
  bench_device measures it where it matters.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable
from typing import Any

from benchmarks.random_direction import random_direction
from benchmarks.targets import Target
from gapscope.models.embedded import embedded_checkpoint
from gapscope.models.engine import Engine, EngineConfig, GenerationRequest, SamplingParams
from gapscope.models.steering import steering
from gapscope.s2b.config import resolve
from gapscope.steer.extract import mean_difference, parse_layers, tokenize_pairs
from gapscope.steer.pairs import build_pairs

PROMPTS = [
    "Name three colors.",
    "What is 12 times 7?",
    "Write one sentence about the sea.",
    "List two prime numbers.",
    "Say hello in French.",
    "What is the capital of Peru?",
    "Give a word that rhymes with cat.",
    "Count from one to five.",
]
MAX_TOKENS = 16
REPEATS = 3


def _engine(batch_size: int) -> Engine:
    config = EngineConfig(kv_reuse=False, batch_size=batch_size)
    return Engine.from_pretrained(embedded_checkpoint(), device="auto", config=config)


def _tokens_per_second(run: Callable[[], list[Any]]) -> float:
    start = time.perf_counter()
    results = run()
    return sum(len(r.tokens) for r in results) / (time.perf_counter() - start)


def _generate_all(engine: Engine, batch: int) -> list[Any]:
    """Every prompt: one request per call at batch 1, all in one call otherwise. Requests are
    made here, so they pick up the steering of the calling context."""
    # every row decodes MAX_TOKENS steps on both sides: a steered reply that never ends must
    # not look faster than an unsteered one that stopped early (tokens/s counts replies)
    params = SamplingParams(max_tokens=MAX_TOKENS, ignore_eos=True)
    requests = [GenerationRequest(({"role": "user", "content": p},), params) for p in PROMPTS]
    if batch == 1:
        return [engine.generate([r])[0] for r in requests]
    return engine.generate(requests)


def _report(key: str, value: float) -> None:
    print(f"{key:34s} {value:.3f}", flush=True)


def steering_overhead() -> dict[str, float]:
    out: dict[str, float] = {}
    for batch in (8, 1):
        engine = _engine(batch)
        vector = random_direction(engine, "gapscope/embedded")
        run = functools.partial(_generate_all, engine, batch)
        run()  # warm-up
        plain = steered = 0.0
        for _ in range(REPEATS):  # alternated, best of each: the machine drifts, not the arms
            plain = max(plain, _tokens_per_second(run))
            with steering(vector, -3.0):
                steered = max(steered, _tokens_per_second(run))
        out[f"batch{batch}_unsteered_tok_s"] = plain
        out[f"batch{batch}_steered_tok_s"] = steered
        out[f"batch{batch}_overhead_pct"] = 100.0 * (plain - steered) / plain
        for key in (f"batch{batch}_unsteered_tok_s", f"batch{batch}_steered_tok_s"):
            _report(key, out[key])
        _report(f"batch{batch}_overhead_pct", out[f"batch{batch}_overhead_pct"])
    return out


def extraction_throughput(seeds: int = 1) -> dict[str, float]:
    engine = _engine(8)
    layers = parse_layers("last-quarter", len(engine.decoder_layers()))
    pairs = tokenize_pairs(engine, build_pairs(resolve("demo"), range(seeds)))
    out: dict[str, float] = {"pairs": float(len(pairs))}
    mean_difference(engine, pairs[:1], layers, batch_size=2)  # warm-up
    for label, batch_size in (("one_pair_per_forward", 2), ("batched_4_pairs", 8)):
        start = time.perf_counter()
        mean_difference(engine, pairs, layers, batch_size=batch_size)
        out[f"{label}_pairs_s"] = len(pairs) / (time.perf_counter() - start)
    out["speedup"] = out["batched_4_pairs_pairs_s"] / out["one_pair_per_forward_pairs_s"]
    for key, value in out.items():
        _report(key, value)
    return out


MAX_OVERHEAD_PCT = 5.0


def main() -> list[Target]:
    """Both measurements; steered tokens/s must keep 95 % of unsteered at batch 1 and 8."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    extraction = extraction_throughput()
    overhead = steering_overhead()
    floor = 1 - MAX_OVERHEAD_PCT / 100
    targets = [
        Target(
            f"steering b{batch}: steered / unsteered tok/s",
            overhead[f"batch{batch}_steered_tok_s"] / overhead[f"batch{batch}_unsteered_tok_s"],
            floor,
        )
        for batch in (8, 1)
    ]
    goal = Target("extraction: 4 pairs / 1 pair per pass", extraction["speedup"], 1.0, False)
    return [*targets, goal]


if __name__ == "__main__":
    main()
