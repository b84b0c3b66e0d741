"""Engine and steering on a GPU, at the shape of DeepSeek-Prover-V2-7B, each against a baseline.

The model is built from its configuration with random weights (no download): a Llama decoder
with hidden size 4096, 30 layers, 32 attention heads (32 key/value heads), MLP width 11008 and
a 102,400-token vocabulary, in bf16 (about 6.9 B parameters, 13.8 GB). Random weights decode
as fast as trained ones; every reply decodes exactly ``MAX_TOKENS`` steps on both sides
(``ignore_eos`` / ``min_new_tokens``), so the arms do the same work whatever the model writes.
The tokenizer is word-level over the whole vocabulary, so a prompt of n words is n tokens.

Ratios printed (each against a same-run baseline, best of ``REPEATS`` with arms alternating):

* ``engine_vs_hf_generate_b{1,16}``: gapscope's engine vs plain ``model.generate`` (greedy,
  left-padded batch), generated tokens/s on the same prompts, KV reuse off;
* ``steering_overhead_pct_b{1,16}``: tokens/s steered (last quarter of the layers, alpha -3)
  vs unsteered;
* ``extraction_speedup``: S2B trace pairs/s when traces reuse the keys/values of the traces
  they extend vs every trace alone (``bench_steer.traces_alone``).

Goals (``required=False``: not gated, since no GPU run has measured them yet; make them
targets once one has): the engine at least as fast as ``generate``, steering overhead under
5 %, extraction with reuse at least 2x. Without CUDA it returns one visible ``SKIPPED`` that
``make bench`` counts. ``GAPSCOPE_BENCH_DEVICE_CPU=1`` runs the same code on the CPU with a tiny
configuration: a check of the code path, not a measurement.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import torch
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

from benchmarks.bench_steer import traces_alone
from benchmarks.random_direction import random_direction
from benchmarks.targets import Skipped, Target, skipped
from gapscope.models.engine import Engine, EngineConfig, GenerationRequest, SamplingParams
from gapscope.models.steering import steering
from gapscope.s2b.config import resolve
from gapscope.steer.extract import mean_difference, parse_layers, tokenize_pairs
from gapscope.steer.pairs import build_pairs

CPU_FLAG = "GAPSCOPE_BENCH_DEVICE_CPU"
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|> {{ m['role'] }} {{ m['content'] }} <|im_end|> "
    "{% endfor %}{% if add_generation_prompt %}<|im_start|> assistant {% endif %}"
)
SPECIAL = ["<pad>", "<s>", "<|im_end|>", "<|im_start|>", "system", "user", "assistant"]


@dataclass(frozen=True)
class Shape:
    """A model size and the workload sized for it."""

    hidden: int
    layers: int
    heads: int
    intermediate: int
    vocab: int
    dtype: torch.dtype
    device: str
    prompts: int
    prompt_words: int
    max_tokens: int
    repeats: int
    extract_seeds: int
    extract_preset: str
    """S2B-LM preset of the pairs (7B: cat-10shot with 8 query games, prompts of ~5,000 words)."""
    extract_overrides: Mapping[str, int]


PROVER_7B = Shape(
    hidden=4096,
    layers=30,
    heads=32,
    intermediate=11008,
    vocab=102_400,
    dtype=torch.bfloat16,
    device="cuda",
    prompts=16,
    prompt_words=96,
    max_tokens=32,
    repeats=2,
    extract_seeds=2,
    extract_preset="cat-10shot",
    extract_overrides={"query_size": 8},
)
"""DeepSeek-Prover-V2-7B's decoder (its config.json: LlamaForCausalLM, 4096 x 30 layers)."""
TINY_CPU = Shape(
    hidden=64,
    layers=4,
    heads=4,
    intermediate=128,
    vocab=1024,
    dtype=torch.float32,
    device="cpu",
    prompts=4,
    prompt_words=12,
    max_tokens=4,
    repeats=1,
    extract_seeds=1,
    extract_preset="demo",
    extract_overrides={"query_size": 2, "coverage": 1, "k_shot": 0},
)


def _tokenizer(vocab_size: int) -> PreTrainedTokenizerFast:
    words = [f"t{i}" for i in range(vocab_size - len(SPECIAL))]
    vocab = {token: index for index, token in enumerate(SPECIAL + words)}
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<pad>"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=backend, pad_token="<pad>", bos_token="<s>", eos_token="<|im_end|>"
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.padding_side = "left"
    return tokenizer


def _model(shape: Shape) -> Any:
    config = LlamaConfig(
        vocab_size=shape.vocab,
        hidden_size=shape.hidden,
        intermediate_size=shape.intermediate,
        num_hidden_layers=shape.layers,
        num_attention_heads=shape.heads,
        num_key_value_heads=shape.heads,
        max_position_embeddings=32_768,  # the 32K context DeepSeek-Prover-V2 was trained to
        rms_norm_eps=1e-6,
        bos_token_id=1,
        eos_token_id=2,
        pad_token_id=0,
        tie_word_embeddings=False,
    )
    torch.manual_seed(0)
    with torch.device(shape.device):  # initialised where it runs: no detour through the CPU
        model: Any = LlamaForCausalLM(config)
    return model.to(shape.dtype).eval()


def _prompts(shape: Shape) -> list[str]:
    return [
        " ".join(f"t{(7 * p + 13 * w) % 5000}" for w in range(shape.prompt_words + p))
        for p in range(shape.prompts)
    ]


def _sync(shape: Shape) -> None:
    if shape.device == "cuda":
        torch.cuda.synchronize()


def _best_rate(shape: Shape, arms: dict[str, Callable[[], int]]) -> dict[str, float]:
    """Tokens (or pairs) per second of each arm, arms alternating, best of ``repeats``."""
    best = dict.fromkeys(arms, 0.0)
    for arm in arms.values():
        arm()  # warm-up: kernels, allocator
    for _ in range(shape.repeats):
        for name, arm in arms.items():
            _sync(shape)
            start = time.perf_counter()
            count = arm()
            _sync(shape)
            best[name] = max(best[name], count / (time.perf_counter() - start))
    return best


def _engine_arm(engine: Engine, prompts: list[str], batch: int, max_tokens: int) -> int:
    params = SamplingParams(max_tokens=max_tokens, ignore_eos=True)
    requests = [GenerationRequest(({"role": "user", "content": p},), params) for p in prompts]
    if batch == 1:
        results = [engine.generate([r])[0] for r in requests]
    else:
        results = engine.generate(requests)
    return sum(len(r.tokens) for r in results)


def _hf_arm(model: Any, tokenizer: Any, prompts: list[str], batch: int, max_tokens: int) -> int:
    texts = [
        tokenizer.apply_chat_template(
            [{"role": "user", "content": p}], add_generation_prompt=True, tokenize=False
        )
        for p in prompts
    ]
    generated = 0
    for first in range(0, len(texts), batch):
        encoded = tokenizer(
            texts[first : first + batch],
            return_tensors="pt",
            padding=True,
            add_special_tokens=False,
        ).to(model.device)
        with torch.inference_mode():
            out = model.generate(
                **encoded,
                max_new_tokens=max_tokens,
                min_new_tokens=max_tokens,
                do_sample=False,
                pad_token_id=tokenizer.pad_token_id,
            )
        generated += (out.shape[1] - encoded["input_ids"].shape[1]) * out.shape[0]
    return generated


class Results(dict[str, float]):
    """The measurements, each printed as it is recorded (a timeout keeps what was shown)."""

    def __setitem__(self, key: str, value: float) -> None:
        super().__setitem__(key, value)
        print(f"{key:40s} {value:10.3f}", flush=True)


def run(shape: Shape) -> dict[str, float]:
    """Every measurement on one model of ``shape``; returns what it printed."""
    model, tokenizer = _model(shape), _tokenizer(shape.vocab)
    prompts = _prompts(shape)
    out = Results()
    vector = random_direction(Engine(model, tokenizer), "random-prover-shape")
    for batch in (1, 16):
        engine = Engine(model, tokenizer, EngineConfig(kv_reuse=False, batch_size=batch))

        def plain(engine: Engine = engine, batch: int = batch) -> int:
            return _engine_arm(engine, prompts, batch, shape.max_tokens)

        def steered(engine: Engine = engine, batch: int = batch) -> int:
            with steering(vector, -3.0):
                return _engine_arm(engine, prompts, batch, shape.max_tokens)

        def hf(batch: int = batch) -> int:
            return _hf_arm(model, tokenizer, prompts, batch, shape.max_tokens)

        rates = _best_rate(shape, {"engine": plain, "steered": steered, "hf": hf})
        out[f"hf_generate_tok_s_b{batch}"] = rates["hf"]
        out[f"engine_tok_s_b{batch}"] = rates["engine"]
        out[f"steered_tok_s_b{batch}"] = rates["steered"]
        out[f"engine_vs_hf_generate_b{batch}"] = rates["engine"] / rates["hf"]
        out[f"steering_overhead_pct_b{batch}"] = 100 * (1 - rates["steered"] / rates["engine"])
    engine = Engine(model, tokenizer, EngineConfig(kv_reuse=False))
    layers = parse_layers("last-quarter", len(engine.decoder_layers()))
    config = resolve(shape.extract_preset, **shape.extract_overrides)
    pairs = tokenize_pairs(engine, build_pairs(config, range(shape.extract_seeds)))
    out["extraction_pairs"] = float(len(pairs))
    out["extraction_mean_tokens"] = sum(
        len(p.prompt) + (len(p.positive) + len(p.negative)) / 2 for p in pairs
    ) / len(pairs)

    def alone() -> int:
        traces_alone(engine, pairs, layers)
        return len(pairs)

    def reused() -> int:
        mean_difference(engine, pairs, layers)
        return len(pairs)

    rates = _best_rate(shape, {"alone": alone, "reused": reused})
    out["extraction_pairs_s_each_trace_alone"] = rates["alone"]
    out["extraction_pairs_s_prefixes_reused"] = rates["reused"]
    out["extraction_speedup"] = rates["reused"] / rates["alone"]
    return out


def goals(out: Mapping[str, float]) -> list[Target]:
    """The GPU goals over one ``run``'s measurements."""
    found = [
        Target(f"device b{b}: engine / HF generate", out[f"engine_vs_hf_generate_b{b}"], 1.0, False)
        for b in (1, 16)
    ]
    found += [
        Target(
            f"device b{b}: steered / unsteered tok/s",
            1 - out[f"steering_overhead_pct_b{b}"] / 100,
            0.95,
            False,
        )
        for b in (1, 16)
    ]
    return [
        *found,
        Target("device extraction: reused / alone", out["extraction_speedup"], 2.0, False),
    ]


def main() -> list[Target | Skipped]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if os.environ.get(CPU_FLAG) == "1":
        print(f"{CPU_FLAG}=1: tiny configuration on the CPU (code path only, no measurement)")
        run(TINY_CPU)
        return [skipped("device bench", "tiny CPU configuration: a code-path check, no target")]
    if not torch.cuda.is_available():
        return [
            skipped(
                "device bench",
                f"no CUDA device (set {CPU_FLAG}=1 to run the code path on the CPU)",
            )
        ]
    print(f"device: {torch.cuda.get_device_name()}")
    return [*goals(run(PROVER_7B))]


if __name__ == "__main__":
    main()
