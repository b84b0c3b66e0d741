"""Embedded-model load time: an empty cache (GGUF dequantization + fp32 copy written) versus a
reload from the cached copy. The prefill benchmark lives in bench_s2b (a real S2B episode)."""

from __future__ import annotations

import os
import tempfile
import time

from gapscope.models.checkpoints import CACHE_DIR_ENV, embedded_checkpoint
from gapscope.models.engine import Engine


def embedded_load_times() -> dict[str, float]:
    """Seconds to load the embedded model into an empty cache, then again from the copy."""
    previous = os.environ.get(CACHE_DIR_ENV)
    with tempfile.TemporaryDirectory() as cache:
        os.environ[CACHE_DIR_ENV] = cache
        try:
            start = time.perf_counter()
            Engine.from_pretrained(embedded_checkpoint())
            first = time.perf_counter() - start
            start = time.perf_counter()
            Engine.from_pretrained(embedded_checkpoint())
            second = time.perf_counter() - start
        finally:
            if previous is None:
                del os.environ[CACHE_DIR_ENV]
            else:
                os.environ[CACHE_DIR_ENV] = previous
    return {"first_load_s": first, "cached_load_s": second, "speedup": first / second}


def main() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    for key, value in embedded_load_times().items():
        print(f"{key:32s} {value:.3f}")


if __name__ == "__main__":
    main()
