"""The embedded models on the CPU: gapscope's engine vs HF ``generate``, llama.cpp and the
memory-bandwidth bound, all measured in one run.

* **Bound**: decoding one token at batch 1 reads every weight once, so tokens/s cannot pass
  ``bandwidth / weight bytes``. The bandwidth is this machine's, measured here (a 256 MB
  array copy, read + write); the bytes are those each engine's weight format reads per
  token (the input embedding table only where the output head reads it too).
* **Engine**: ``Engine.from_pretrained`` in fp32 and with ``dtype=int8``
  (``gapscope.models.weight_format``), batch 1, 4, 8 and 16,
  ``MAX_TOKENS`` greedy tokens per reply, end-of-sequence ignored, KV reuse off: every reply
  decodes the same number of steps on every side.
* **HF generate**: the fp32 checkpoint through ``model.generate`` (greedy, left-padded
  batches, ``min_new_tokens`` = ``max_new_tokens``), on the same token ids.
* **llama.cpp**: the very GGUF the embedded package ships, batch 1, as many threads as torch
  (``OMP_NUM_THREADS`` where set, else one per core),
  on the same token ids, where ``llama_cpp`` is importable here or ``GAPSCOPE_LLAMACPP_PYTHON``
  names an interpreter that has it (``pip install llama-cpp-python``, a ~11-minute build);
  skipped with the reason otherwise.

Arms alternate round by round and each keeps its best of ``REPEATS``, so a machine shared
with other jobs slows every arm alike; the ratios are what to read, not the tokens/s.

Targets (``make bench`` fails on a required one), for the engine in the format the provider
loads the embedded models in by default (``dtype=auto`` is ``fastest`` for them: the format
faster at batch 1, here the one faster in this run): at least HF ``generate`` at every batch
size, and at batch 1 at least ``LLAMACPP_B1_TARGET`` x llama.cpp where llama.cpp runs. Goals
(reported, not failed on): the same for the other format, and each format's batch-8 aggregate
at least ``LLAMACPP_B8_GOAL`` x llama.cpp's batch 1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import torch
from transformers import AutoModelForCausalLM

from benchmarks.targets import Target
from gapscope.models.embedded import EMBEDDED_MODELS, EmbeddedModel, embedded_checkpoint
from gapscope.models.engine import Engine, EngineConfig, GenerationRequest, SamplingParams
from gapscope.models.weight_format import decode_bytes

BATCHES = (1, 4, 8, 16)
ENGINE_FORMATS = ("float32", "int8")
"""The two CPU formats; the embedded models' default (``fastest``) is the faster of them."""
MAX_TOKENS = 64
REPEATS = 2
COPY_BYTES = 256 << 20
LLAMACPP_B1_TARGET = 0.5
LLAMACPP_B8_GOAL = 1.5
LLAMACPP_PYTHON_ENV = "GAPSCOPE_LLAMACPP_PYTHON"
"""An interpreter with ``llama_cpp`` installed, used when this one has none."""
ARM_SCRIPT = Path(__file__).with_name("llamacpp_arm.py")


def copy_bandwidth(size: int = COPY_BYTES, repeats: int = 5) -> float:
    """Bytes/s of a large array copy (each byte read once and written once), best of
    ``repeats``."""
    source = torch.ones(size // 4, dtype=torch.float32)
    target = torch.empty_like(source)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        target.copy_(source)
        best = min(best, time.perf_counter() - start)
    return 2 * size / best


def _messages(count: int) -> list[tuple[dict[str, str], ...]]:
    """``count`` short chat prompts, one user turn each."""
    return [
        ({"role": "user", "content": f"Write a short story about the number {n}."},)
        for n in range(count)
    ]


def _engine_arm(engine: Engine, batch: int) -> Callable[[], int]:
    params = SamplingParams(max_tokens=MAX_TOKENS, ignore_eos=True)
    requests = [GenerationRequest(m, params, hooks=None) for m in _messages(batch)]

    def run() -> int:
        return sum(len(result.tokens) for result in engine.generate(requests))

    return run


def _hf_arm(model: Any, prompts: Sequence[Sequence[int]], pad: int) -> Callable[[], int]:
    """``model.generate`` on ``prompts`` as one left-padded batch."""
    width = max(len(prompt) for prompt in prompts)
    ids = torch.full((len(prompts), width), pad, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for row, prompt in enumerate(prompts):
        ids[row, width - len(prompt) :] = torch.tensor(prompt)
        mask[row, width - len(prompt) :] = 1

    def run() -> int:
        with torch.inference_mode():
            out = model.generate(
                input_ids=ids,
                attention_mask=mask,
                max_new_tokens=MAX_TOKENS,
                min_new_tokens=MAX_TOKENS,
                do_sample=False,
                pad_token_id=pad,
            )
        return int((out.shape[1] - width) * out.shape[0])

    return run


class LlamaCpp:
    """llama.cpp in this interpreter, or in a subprocess of ``$GAPSCOPE_LLAMACPP_PYTHON``."""

    def __init__(self, gguf: Path) -> None:
        self._process: subprocess.Popen[str] | None = None
        self._arm: Any = None
        try:
            from benchmarks.llamacpp_arm import LlamaCppArm

            self._arm = LlamaCppArm(str(gguf))
        except ImportError:
            python = os.environ.get(LLAMACPP_PYTHON_ENV)
            if not python:
                raise
            self._process = subprocess.Popen(
                [python, str(ARM_SCRIPT)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
            )
            self._ask({"gguf": str(gguf)})

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self._process is not None and self._process.stdin and self._process.stdout
        self._process.stdin.write(json.dumps(request) + "\n")
        self._process.stdin.flush()
        line = self._process.stdout.readline()
        if not line:
            raise RuntimeError(f"the llama.cpp subprocess ({ARM_SCRIPT.name}) exited")
        answer: dict[str, Any] = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"llama.cpp subprocess: {answer['error']}")
        return answer

    def rate(self, prompts: Sequence[Sequence[int]]) -> float:
        """Tokens/s decoding each prompt in turn (batch 1)."""
        if self._arm is not None:
            seconds, generated = self._arm.decode(prompts, MAX_TOKENS)
        else:
            answer = self._ask({"prompts": [list(p) for p in prompts], "max_tokens": MAX_TOKENS})
            seconds, generated = answer["seconds"], answer["generated"]
        return float(generated) / float(seconds)

    def close(self) -> None:
        if self._process is not None:
            self._process.stdin.close()  # type: ignore[union-attr]
            self._process.wait(timeout=30)


def _llamacpp(gguf: Path) -> tuple[LlamaCpp | None, str]:
    """llama.cpp on ``gguf``, or None and why not."""
    try:
        return LlamaCpp(gguf), ""
    except ImportError:
        return None, (
            f"llama_cpp is not importable here and ${LLAMACPP_PYTHON_ENV} is not set "
            "(pip install llama-cpp-python, in this or another interpreter)"
        )


def _timed(arm: Callable[[], int]) -> float:
    start = time.perf_counter()
    tokens = arm()
    return tokens / (time.perf_counter() - start)


def _engines(checkpoint: Path) -> dict[str, Engine]:
    """The engine in each of ``ENGINE_FORMATS``, named by the format it ended up in."""
    engines = {}
    for dtype in ENGINE_FORMATS:
        config = EngineConfig(kv_reuse=False, batch_size=max(BATCHES))
        engine = Engine.from_pretrained(checkpoint, device="cpu", dtype=dtype, config=config)
        engines[engine.weight_format] = engine
    return engines


def _best(arms: dict[str, Callable[[], float]]) -> dict[str, float]:
    """Each arm's best rate over ``REPEATS`` rounds, the arms alternating within a round."""
    best = dict.fromkeys(arms, 0.0)
    for _ in range(REPEATS):
        for name, arm in arms.items():
            best[name] = max(best[name], arm())
    return best


def run_model(model: EmbeddedModel, bandwidth: float, scratch: Path) -> list[Target]:
    """Every arm on one embedded model; prints the table and returns its targets (required
    for the engine as loaded by default, goals for the other formats)."""
    label = model.model_string
    checkpoint = embedded_checkpoint(model)
    engines = _engines(checkpoint)
    hf: Any = AutoModelForCausalLM.from_pretrained(checkpoint, local_files_only=True)
    hf.eval()
    first = next(iter(engines.values()))
    tokenizer = first.tokenizer
    prompts = [first.render(messages) for messages in _messages(max(BATCHES))]
    pad = int(tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0)
    llama, reason = _llamacpp(model.gguf(model, scratch))
    arms: dict[str, Callable[[], float]] = {}
    for batch in BATCHES:
        for name, engine in engines.items():
            arms[f"{name} b{batch}"] = partial(_timed, _engine_arm(engine, batch))
        arms[f"hf b{batch}"] = partial(_timed, _hf_arm(hf, prompts[:batch], pad))
    if llama is not None:
        arms["llama.cpp b1"] = partial(llama.rate, prompts[:1])
        llama.rate(prompts[:1])  # warm-up: the GGUF's pages are mapped in on first use
    for engine in engines.values():
        _engine_arm(engine, 1)()  # warm-up: allocator, kernels
    _hf_arm(hf, prompts[:1], pad)()
    best = _best(arms)
    if llama is not None:
        llama.close()
    for name, rate in best.items():
        print(f"{label} {name:16s} {rate:8.1f} tok/s")
    targets = []
    default = max(engines, key=lambda name: best[f"{name} b1"])  # what ``fastest`` keeps
    for name, engine in engines.items():
        required = name == default
        weight_bytes = decode_bytes(engine.model)
        bound = bandwidth / weight_bytes
        print(
            f"{label} engine {name}{' (default)' if required else ''}: "
            f"{weight_bytes / 1e6:.0f} MB read per token, batch-1 bound {bound:.1f} tok/s, "
            f"engine/bound b1 {best[f'{name} b1'] / bound:.2f}x"
        )
        for batch in BATCHES:
            ratio = best[f"{name} b{batch}"] / best[f"hf b{batch}"]
            targets.append(Target(f"{label} {name} / HF generate, b{batch}", ratio, 1.0, required))
        if llama is None:
            continue
        b1, b8 = (best[f"{name} b{batch}"] / best["llama.cpp b1"] for batch in (1, 8))
        targets.append(Target(f"{label} {name} / llama.cpp, b1", b1, LLAMACPP_B1_TARGET, required))
        targets.append(Target(f"{label} {name} b8 / llama.cpp b1", b8, LLAMACPP_B8_GOAL, False))
    if llama is None:
        print(f"{label} llama.cpp: skipped ({reason})")
    for target in targets:
        print(target.line())
    return targets


def main() -> list[Target]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    bandwidth = copy_bandwidth()
    print(f"array-copy bandwidth: {bandwidth / 1e9:.1f} GB/s; {torch.get_num_threads()} threads")
    targets: list[Target] = []
    with tempfile.TemporaryDirectory() as scratch:
        for model in EMBEDDED_MODELS.values():
            targets.extend(run_model(model, bandwidth, Path(scratch)))
    return targets


if __name__ == "__main__":
    sys.exit(1 if any(not t.met and t.required for t in main()) else 0)
