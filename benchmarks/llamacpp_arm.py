"""llama.cpp's side of ``bench_engine_cpu``: greedy decoding of given token ids, batch 1.

Needs only the standard library and ``llama_cpp`` (``pip install llama-cpp-python``), so it
runs in the benchmark's own interpreter when that has llama.cpp, or as a subprocess of an
interpreter that has it (``GAPSCOPE_LLAMACPP_PYTHON``): llama.cpp takes minutes to build, and
``make setup`` / ``make test`` must not build it.

As a subprocess it serves one JSON request per stdin line and answers one JSON line each, so
the benchmark can interleave llama.cpp with the other engines round by round:
``{"gguf": path}`` loads the model (answer ``{"loaded": true}``);
``{"prompts": [[ids...], ...], "max_tokens": n}`` decodes each prompt in turn and answers
``{"seconds": s, "generated": n}``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Sequence
from itertools import islice
from typing import Any


class LlamaCppArm:
    """One GGUF loaded in llama.cpp with as many threads as torch uses: ``OMP_NUM_THREADS``
    where set, else one per core."""

    def __init__(self, gguf: str, context: int = 1024) -> None:
        from llama_cpp import Llama

        threads = int(os.environ.get("OMP_NUM_THREADS") or os.cpu_count() or 1)
        self.model: Any = Llama(
            model_path=gguf, n_ctx=context, n_threads=threads, n_batch=512, verbose=False
        )

    def decode(self, prompts: Sequence[Sequence[int]], max_tokens: int) -> tuple[float, int]:
        """Seconds to decode ``max_tokens`` greedy tokens after each prompt (end-of-sequence
        ignored, no prefix reuse between prompts), and the tokens generated."""
        generated = 0
        start = time.perf_counter()
        for prompt in prompts:
            self.model.reset()  # no KV reuse across prompts: the engine runs without it too
            tokens = self.model.generate(list(prompt), top_k=1, temp=0.0)
            generated += sum(1 for _ in islice(tokens, max_tokens))
        return time.perf_counter() - start, generated


def serve() -> None:
    """The subprocess loop: one JSON request per line on stdin, one answer per line."""
    arm: LlamaCppArm | None = None
    for line in sys.stdin:
        request = json.loads(line)
        if "gguf" in request:
            arm = LlamaCppArm(request["gguf"])
            answer: dict[str, Any] = {"loaded": True}
        elif arm is None:
            answer = {"error": "no model loaded"}
        else:
            seconds, generated = arm.decode(request["prompts"], int(request["max_tokens"]))
            answer = {"seconds": seconds, "generated": generated}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    serve()
