"""llama.cpp's side of ``bench_engine_cpu``: greedy decoding of given token ids, batch 1.

Needs only the standard library and ``llama_cpp`` (``pip install llama-cpp-python``, a build of
11-25 minutes, which ``make setup`` must not do). It always runs as a subprocess of an
interpreter that has llama.cpp: a crash inside llama.cpp then ends only the subprocess, and the
benchmark can tell it and retry. On CPUs with AMX, llama-cpp-python 0.3.36 segfaults on the
first multi-token prompt while it uses its "extra buffer types" (AMX weight repacking); the
benchmark then starts the arm again with ``extra_bufts`` false.

It serves one JSON request per stdin line and answers one JSON line each, so the benchmark can
interleave llama.cpp with the other arms round by round:
``{"gguf": path, "threads": n, "extra_bufts": bool}`` loads the model (answer ``{"loaded":
true}``); ``{"prompts": [[ids...], ...], "max_tokens": n}`` decodes each prompt in turn and
answers ``{"seconds": s, "prefill_seconds": p, "generated": n}`` (``p``: until each prompt's
first token, summed).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from typing import Any


class LlamaCppArm:
    """One GGUF loaded in llama.cpp with ``threads`` threads for prompts and decoding alike."""

    def __init__(self, gguf: str, threads: int, extra_bufts: bool, context: int = 4096) -> None:
        import llama_cpp.llama_cpp as low_level
        from llama_cpp import Llama

        defaults = low_level.llama_model_default_params

        def without_extra_bufts() -> Any:
            params = defaults()
            params.use_extra_bufts = False
            return params

        if not extra_bufts:  # Llama() offers no argument for it: set the default it reads
            low_level.llama_model_default_params = without_extra_bufts
        try:
            self.model: Any = Llama(
                model_path=gguf,
                n_ctx=context,
                n_threads=threads,
                n_threads_batch=threads,
                n_batch=512,
                verbose=False,
            )
        finally:
            low_level.llama_model_default_params = defaults

    def decode(self, prompts: Sequence[Sequence[int]], max_tokens: int) -> tuple[float, float, int]:
        """Seconds to decode ``max_tokens`` greedy tokens after each prompt (end-of-sequence
        ignored, no prefix reuse between prompts), of them the seconds to each first token,
        and the tokens generated."""
        generated, prefill = 0, 0.0
        start = time.perf_counter()
        for prompt in prompts:
            self.model.reset()  # no KV reuse across prompts: the engine runs without it too
            began = time.perf_counter()
            for count, _ in enumerate(self.model.generate(list(prompt), top_k=1, temp=0.0)):
                if count == 0:
                    prefill += time.perf_counter() - began
                generated += 1
                if count + 1 == max_tokens:
                    break
        return time.perf_counter() - start, prefill, generated


def serve() -> None:
    """The subprocess loop: one JSON request per line on stdin, one answer per line."""
    arm: LlamaCppArm | None = None
    for line in sys.stdin:
        request = json.loads(line)
        if "gguf" in request:
            arm = LlamaCppArm(request["gguf"], int(request["threads"]), request["extra_bufts"])
            answer: dict[str, Any] = {"loaded": True}
        elif arm is None:
            answer = {"error": "no model loaded"}
        else:
            seconds, prefill, generated = arm.decode(request["prompts"], int(request["max_tokens"]))
            answer = {"seconds": seconds, "prefill_seconds": prefill, "generated": generated}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    serve()
