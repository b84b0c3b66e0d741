"""Embedded-model load time, per embedded model: an empty cache (GGUF assembly and
dequantization, fp32 copy and manifest written) versus a reload from the verified copy.
The prefill benchmark lives in bench_s2b (a real S2B episode).

Target: a reload from the verified copy at least ``MIN_SPEEDUP`` times as fast as the first
load (the cache is what makes every later run start quickly; 59x measured: 131 s vs 2.2 s on
the shared 2-core machine under load)."""

from __future__ import annotations

import os
import tempfile
import time

from benchmarks.targets import Target
from gapscope.models.checkpoints import CACHE_DIR_ENV
from gapscope.models.embedded import EMBEDDED_MODELS, EmbeddedModel, embedded_checkpoint
from gapscope.models.engine import Engine


def _load_seconds(model: EmbeddedModel) -> float:
    start = time.perf_counter()
    Engine.from_pretrained(embedded_checkpoint(model), device="cpu")
    return time.perf_counter() - start


def embedded_load_times(model: EmbeddedModel) -> dict[str, float]:
    """Seconds to load `model` into an empty cache, then again from the cached copy."""
    previous = os.environ.get(CACHE_DIR_ENV)
    with tempfile.TemporaryDirectory() as cache:
        os.environ[CACHE_DIR_ENV] = cache
        try:
            first = _load_seconds(model)
            second = _load_seconds(model)
        finally:
            if previous is None:
                del os.environ[CACHE_DIR_ENV]
            else:
                os.environ[CACHE_DIR_ENV] = previous
    return {"first_load_s": first, "cached_load_s": second, "speedup": first / second}


MIN_SPEEDUP = 10.0


def main() -> list[Target]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    targets = []
    for model in EMBEDDED_MODELS.values():
        times = embedded_load_times(model)
        for key, value in times.items():
            print(f"{model.model_string:32s} {key:16s} {value:.3f}")
        name = f"{model.model_string}: first / cached load time"
        targets.append(Target(name, times["speedup"], MIN_SPEEDUP))
    return targets


if __name__ == "__main__":
    main()
