"""Embedded-model load time, per embedded model: an empty cache (GGUF assembly and
dequantization, fp32 copy and manifest written) versus a reload from the verified copy.
The prefill benchmark lives in bench_s2b (a real S2B episode)."""

from __future__ import annotations

import os
import tempfile
import time

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


def main() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    for model in EMBEDDED_MODELS.values():
        for key, value in embedded_load_times(model).items():
            print(f"{model.model_string:32s} {key:16s} {value:.3f}")


if __name__ == "__main__":
    main()
