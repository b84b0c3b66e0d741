"""Steering costs on the embedded model, each against a same-run baseline.

* overhead: generated tokens/s with a steering vector on the last quarter of the layers
  versus unsteered, same prompts, at batch 1 (one request per call) and batch 8 (one call of
  eight); target: overhead < 5 %. KV reuse is off so both sides compute the same prefill, and
  every reply decodes exactly MAX_TOKENS steps (``ignore_eos``) so both do the same work.
* extraction: trace pairs/s of ``mean_difference`` over the 4 pairs of one demo episode (8
  traces), where a trace reuses the keys/values of the traces it extends, versus every trace
  computed alone (``traces_alone``: one ``span_means`` call per trace, nothing reused).
  Target: reuse at least ``MIN_REUSE_SPEEDUP`` x as fast (the traces share most of their
  tokens, so it is about 5x on two cores).
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

from benchmarks.random_direction import random_direction
from benchmarks.targets import Target
from gapscope.models.embedded import embedded_checkpoint
from gapscope.models.engine import Engine, EngineConfig, GenerationRequest, SamplingParams
from gapscope.models.steering import steering
from gapscope.s2b.config import resolve
from gapscope.steer.extract import PairTokens, mean_difference, parse_layers, tokenize_pairs
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
    mean_difference(engine, pairs[:1], layers)  # warm-up
    arms: dict[str, Callable[[], object]] = {
        "alone": lambda: traces_alone(engine, pairs, layers),
        "reused": lambda: mean_difference(engine, pairs, layers),
    }
    for label, arm in arms.items():
        start = time.perf_counter()
        arm()
        out[f"{label}_pairs_s"] = len(pairs) / (time.perf_counter() - start)
    out["speedup"] = out["reused_pairs_s"] / out["alone_pairs_s"]
    for key, value in out.items():
        _report(key, value)
    return out


def traces_alone(engine: Engine, pairs: Sequence[PairTokens], layers: Sequence[int]) -> None:
    """The baseline of the extraction arms: every trace's span means in a call of its own,
    so no trace reuses another's keys/values."""
    for pair in pairs:
        for trace in (pair.positive, pair.negative):
            span = (len(pair.prompt), len(pair.prompt) + len(trace))
            engine.span_means([pair.prompt + trace], [span], layers)


MAX_OVERHEAD_PCT = 5.0
MIN_REUSE_SPEEDUP = 2.0


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
    reuse = Target("extraction: reused / alone", extraction["speedup"], MIN_REUSE_SPEEDUP)
    return [*targets, reuse]


if __name__ == "__main__":
    main()
