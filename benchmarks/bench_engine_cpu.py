"""The embedded models on the CPU, on the diagnostics' own prompts: gapscope's engine as the
provider loads it vs HF ``generate``, llama.cpp and the memory-bandwidth bound, in one run.

* **Prompts**: what the S2B-LM and OracleLadder tasks send (``task_prompts``): batch 1 decodes
  one S2B listener turn and one OracleLadder probe in turn, batch 8 the first eight
  conversations at once; ``MAX_TOKENS`` greedy tokens a reply, end-of-sequence ignored, KV
  reuse off, so every arm does the same work whatever the model writes.
* **Engine**: ``Engine.from_pretrained`` with the provider's own defaults
  (``gapscope.models.inspect_api``: ``dtype=auto``, the format it loads: ``gguf``, the GGUF's
  own codes evaluated exactly, where the kernel builds, else fp32), fp32 (``dtype=float32``)
  and the opt-in ``dtype=int8``, both reported only.
* **HF generate**: the fp32 checkpoint through ``model.generate`` (greedy, left-padded batch,
  ``min_new_tokens`` = ``max_new_tokens``).
* **llama.cpp**: the very GGUF the embedded package ships, batch 1, in a subprocess of
  ``$GAPSCOPE_LLAMACPP_PYTHON`` or else of ``.venv-llamacpp`` (``make llamacpp`` builds it);
  without either, a visible ``SKIPPED``. If it crashes (AMX CPUs: llama-cpp-python 0.3.36
  segfaults on a multi-token prompt with its extra buffer types) it is restarted once with
  ``use_extra_bufts=False``, and the line says so.
* **Threads**: every arm uses ``torch.get_num_threads()`` threads (``OMP_NUM_THREADS`` where
  set), printed; on a busy 2-core machine llama.cpp's spin barriers collapse its speed at 2
  threads, so ``OMP_NUM_THREADS=1`` is the comparison to read there.
* **Bound**: batch-1 decoding reads every weight once, so tokens/s cannot pass
  ``bandwidth / weight bytes`` (the bandwidth measured here, a 256 MB array copy).

Each round runs every arm once, in turn; each arm's rate is the median of ``ROUNDS`` rounds,
so other load on the machine slows every arm alike. End to end is the generated tokens over
the whole call (prefill included); decode excludes the time to each prompt's first token.

Targets (``make bench`` fails on a required one), for the format the provider loads: end to
end at least HF ``generate``'s at batch 1 and 8 and at least llama.cpp's at batch 1, batch-1
decode at least ``LLAMACPP_DECODE_GOAL`` x llama.cpp's, batch-8 aggregate decode at least
``LLAMACPP_B8_GOAL`` x llama.cpp's batch 1. The same ratios for fp32 and int8 are reported,
not failed on.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from transformers import AutoModelForCausalLM

from benchmarks.targets import Skipped, Target, skipped
from benchmarks.task_prompts import Conversation, task_prompts
from gapscope.models.embedded import EMBEDDED_MODELS, EmbeddedModel, embedded_checkpoint
from gapscope.models.engine import Engine, EngineConfig, GenerationRequest, SamplingParams
from gapscope.models.inspect_api import ModelArgs
from gapscope.models.weight_format import decode_bytes

BATCHES = (1, 8)
MAX_TOKENS = 64
ROUNDS = 3
COPY_BYTES = 256 << 20
LLAMACPP_DECODE_GOAL = 0.75
LLAMACPP_B8_GOAL = 2.0
LLAMACPP_PYTHON_ENV = "GAPSCOPE_LLAMACPP_PYTHON"
LLAMACPP_VENV_PYTHON = Path(__file__).resolve().parent.parent / ".venv-llamacpp/bin/python"
"""Where ``make llamacpp`` builds llama-cpp-python: the arm's interpreter unless
``$GAPSCOPE_LLAMACPP_PYTHON`` names another."""
ARM_SCRIPT = Path(__file__).with_name("llamacpp_arm.py")


@dataclass(frozen=True)
class Rate:
    """One timed call: generated tokens, total seconds, seconds to the first tokens, and the
    prompts (rows), each of whose first token came with its prefill."""

    generated: int
    seconds: float
    prefill_seconds: float
    prompts: int

    @property
    def end_to_end(self) -> float:
        return self.generated / self.seconds

    @property
    def decode(self) -> float:
        """Tokens/s after each prompt's first token."""
        return (self.generated - self.prompts) / (self.seconds - self.prefill_seconds)


Arm = Callable[[], Rate]


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


def workloads(conversations: Sequence[Conversation]) -> dict[int, list[Conversation]]:
    """Batch 1: the first S2B listener turn and the first OracleLadder probe; batch 8: the
    first eight conversations the tasks sent."""
    s2b = next(c for c in conversations if "Game " in c[-1]["content"])
    ladder = next(c for c in conversations if "Problem" in c[-1]["content"])
    return {1: [s2b, ladder], 8: list(conversations[:8])}


def _engine_arm(engine: Engine, batch: int, conversations: Sequence[Conversation]) -> Arm:
    """Batch 1 runs the conversations one by one; batch 8 all at once. The time to the first
    tokens is the call's time less the engine's own decode time (``EngineStats.
    decode_seconds``), as llama.cpp's arm times its first token within the call: a separate
    one-token call, subtracted, carried the noise of the batch's 5,000-token prefill (20-30 s)
    into a decode time of 3 s, and read 478 tok/s for a batch that decodes about 200."""
    groups = [[c] for c in conversations] if batch == 1 else [list(conversations)]

    def run() -> Rate:
        params = SamplingParams(max_tokens=MAX_TOKENS, ignore_eos=True)
        start, generated = time.perf_counter(), 0
        decoding = engine.stats.decode_seconds
        for group in groups:
            results = engine.generate([GenerationRequest(c, params, hooks=None) for c in group])
            generated += sum(len(result.tokens) for result in results)
        seconds = time.perf_counter() - start
        decoding = engine.stats.decode_seconds - decoding
        return Rate(generated, seconds, seconds - decoding, len(conversations))

    return run


def _hf_arm(model: Any, prompts: Sequence[Sequence[int]], batch: int, pad: int) -> Arm:
    """``model.generate``: batch 1 one prompt at a time, batch 8 one left-padded batch."""
    groups = [[p] for p in prompts] if batch == 1 else [list(prompts)]

    def call(max_tokens: int) -> tuple[int, float]:
        start, generated = time.perf_counter(), 0
        for group in groups:
            width = max(len(prompt) for prompt in group)
            ids = torch.full((len(group), width), pad, dtype=torch.long)
            mask = torch.zeros_like(ids)
            for row, prompt in enumerate(group):
                ids[row, width - len(prompt) :] = torch.tensor(prompt)
                mask[row, width - len(prompt) :] = 1
            with torch.inference_mode():
                out = model.generate(
                    input_ids=ids,
                    attention_mask=mask,
                    max_new_tokens=max_tokens,
                    min_new_tokens=max_tokens,
                    do_sample=False,
                    pad_token_id=pad,
                )
            generated += int((out.shape[1] - width) * out.shape[0])
        return generated, time.perf_counter() - start

    def run() -> Rate:
        _, prefill = call(1)
        generated, seconds = call(MAX_TOKENS)
        return Rate(generated, seconds, prefill, len(prompts))

    return run


class LlamaCpp:
    """llama.cpp in a subprocess of ``$GAPSCOPE_LLAMACPP_PYTHON`` (see ``llamacpp_arm``)."""

    def __init__(self, python: str, gguf: Path, threads: int, extra_bufts: bool) -> None:
        self.extra_bufts = extra_bufts
        self._process = subprocess.Popen(
            [python, str(ARM_SCRIPT)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self._ask({"gguf": str(gguf), "threads": threads, "extra_bufts": extra_bufts})

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        process = self._process
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps(request) + "\n")
        process.stdin.flush()
        line = process.stdout.readline()
        if not line:
            raise ChildProcessError(f"llama.cpp exited with status {process.wait(timeout=30)}")
        answer: dict[str, Any] = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"llama.cpp subprocess: {answer['error']}")
        return answer

    def arm(self, prompts: Sequence[Sequence[int]]) -> Arm:
        def run() -> Rate:
            request = {"prompts": [list(p) for p in prompts], "max_tokens": MAX_TOKENS}
            answer = self._ask(request)
            return Rate(
                int(answer["generated"]),
                float(answer["seconds"]),
                float(answer["prefill_seconds"]),
                len(prompts),
            )

        return run

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        self._process.wait(timeout=30)


def start_llamacpp(
    gguf: Path, threads: int, probe: Sequence[Sequence[int]]
) -> tuple[LlamaCpp | None, str]:
    """llama.cpp on ``gguf``, checked on ``probe`` (multi-token prompts: where the AMX crash
    happens): with its extra buffer types, else (it crashed) without. None and why not."""
    python = os.environ.get(LLAMACPP_PYTHON_ENV)
    if not python and LLAMACPP_VENV_PYTHON.exists():
        python = str(LLAMACPP_VENV_PYTHON)
    if not python:
        return None, (
            f"no llama-cpp-python: run `make llamacpp` (an 11-25 minute build into "
            f"{LLAMACPP_VENV_PYTHON.parent.parent}) or set ${LLAMACPP_PYTHON_ENV}"
        )
    for extra_bufts in (True, False):
        llama = LlamaCpp(python, gguf, threads, extra_bufts)
        try:
            llama.arm(probe)()  # also the warm-up: the GGUF's pages are mapped on first use
        except ChildProcessError as error:
            print(f"llama.cpp with use_extra_bufts={extra_bufts} crashed ({error}); retrying")
            continue
        return llama, ""
    return None, "llama.cpp crashed with and without use_extra_bufts"


def _median_rates(arms: dict[str, Arm]) -> dict[str, tuple[float, float]]:
    """Each arm's median (end-to-end, decode) tokens/s over ``ROUNDS`` interleaved rounds."""
    seen: dict[str, list[Rate]] = {name: [] for name in arms}
    for _ in range(ROUNDS):
        for name, arm in arms.items():
            seen[name].append(arm())
    return {
        name: (
            statistics.median(rate.end_to_end for rate in rates),
            statistics.median(rate.decode for rate in rates),
        )
        for name, rates in seen.items()
    }


def run_model(
    model: EmbeddedModel,
    bandwidth: float,
    scratch: Path,
    conversations: Sequence[Conversation],
) -> list[Target | Skipped]:
    """Every arm on one embedded model; prints the table and returns its targets."""
    label = model.model_string
    checkpoint = embedded_checkpoint(model)
    config = EngineConfig(kv_reuse=False, batch_size=max(BATCHES))
    default = Engine.from_pretrained(
        checkpoint, device="cpu", dtype=ModelArgs().dtype, config=config
    )
    fp32 = Engine.from_pretrained(checkpoint, device="cpu", dtype="float32", config=config)
    int8 = Engine.from_pretrained(checkpoint, device="cpu", dtype="int8", config=config)
    engines = {f"engine {default.weight_format} (default)": default}
    if default.weight_format != fp32.weight_format:
        engines["engine float32"] = fp32
    engines["engine int8 (opt-in)"] = int8
    hf: Any = AutoModelForCausalLM.from_pretrained(checkpoint, local_files_only=True)
    hf.eval()
    pad_id = default.tokenizer.pad_token_id
    pad = int(pad_id if pad_id is not None else 0)
    work = workloads(conversations)
    prompts = {batch: [default.render(c) for c in work[batch]] for batch in BATCHES}
    threads = torch.get_num_threads()
    llama, reason = start_llamacpp(model.gguf(model, scratch), threads, prompts[1][:1])
    arms: dict[str, Arm] = {}
    for batch in BATCHES:
        for name, engine in engines.items():
            arms[f"{name} b{batch}"] = _engine_arm(engine, batch, work[batch])
        arms[f"hf fp32 b{batch}"] = _hf_arm(hf, prompts[batch], batch, pad)
    if llama is not None:
        arms["llama.cpp b1"] = llama.arm(prompts[1])
    for engine in engines.values():
        _engine_arm(engine, 1, work[1][:1])()  # warm-up: allocator, kernels
    rates = _median_rates(arms)
    results: list[Target | Skipped] = []
    if llama is not None:
        print(f"{label} llama.cpp: {threads} threads, use_extra_bufts={llama.extra_bufts}")
        llama.close()
    else:
        results.append(skipped(f"{label} llama.cpp arm", reason))
    print(f"{label}: {threads} torch threads; tok/s, medians of {ROUNDS} interleaved rounds")
    for name, (end_to_end, decode) in rates.items():
        print(f"{label} {name:28s} end to end {end_to_end:7.1f}   decode {decode:7.1f}")
    for name, engine in engines.items():
        required = engine is default
        weight_bytes = decode_bytes(engine.model)
        bound = bandwidth / weight_bytes
        print(
            f"{label} {name}: {weight_bytes / 1e6:.0f} MB read per token, batch-1 bound "
            f"{bound:.1f} tok/s, decode/bound b1 {rates[f'{name} b1'][1] / bound:.2f}x"
        )
        for batch in BATCHES:
            ratio = rates[f"{name} b{batch}"][0] / rates[f"hf fp32 b{batch}"][0]
            results.append(
                Target(f"{label} {name} / HF generate, end to end b{batch}", ratio, 1.0, required)
            )
        if llama is None:
            continue
        reference = rates["llama.cpp b1"]
        mine, eight = rates[f"{name} b1"], rates[f"{name} b8"]
        results += [
            Target(
                f"{label} {name} / llama.cpp, end to end b1",
                mine[0] / reference[0],
                1.0,
                required,
            ),
            Target(
                f"{label} {name} / llama.cpp, decode b1",
                mine[1] / reference[1],
                LLAMACPP_DECODE_GOAL,
                required,
            ),
            Target(
                f"{label} {name} b8 / llama.cpp b1, decode",
                eight[1] / reference[1],
                LLAMACPP_B8_GOAL,
                required,
            ),
        ]
    for result in results:
        if isinstance(result, Target):
            print(result.line())
    return results


def main() -> list[Target | Skipped]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    bandwidth = copy_bandwidth()
    print(f"array-copy bandwidth: {bandwidth / 1e9:.1f} GB/s; {torch.get_num_threads()} threads")
    conversations = task_prompts()
    results: list[Target | Skipped] = []
    with tempfile.TemporaryDirectory() as scratch:
        for model in EMBEDDED_MODELS.values():
            results.extend(run_model(model, bandwidth, Path(scratch), conversations))
    return results


if __name__ == "__main__":
    sys.exit(1 if any(isinstance(t, Target) and t.required and not t.met for t in main()) else 0)
