"""Embedded-model engine benchmarks: prefill saved by KV reuse, and cached load time.

(a) An S2B-shaped conversation: 30 user turns of about 60 tokens, each followed by a
    generated assistant reply of up to 16 tokens, all appended to one conversation. With
    KV reuse each turn computes only its new suffix (linear total); without it every turn
    recomputes the whole conversation (quadratic). The no-reuse run replays the replies
    the reuse run generated, so both see identical prompts; whether its own greedy replies
    matched token for token is reported as a correctness check.
(b) Loading the embedded model into an empty cache (GGUF dequantization + fp32 copy)
    versus loading it again from the copy.
"""

from __future__ import annotations

import os
import random
import tempfile
import time
from collections.abc import Mapping
from typing import Any

from gapscope.models.checkpoints import CACHE_DIR_ENV, embedded_checkpoint
from gapscope.models.engine import Engine, EngineConfig, GenerationRequest, SamplingParams

_WORDS = [
    *("red", "green", "blue", "square", "circle", "triangle", "left", "right", "above"),
    *("below", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"),
    *("ten", "symbol", "rule", "game", "card", "token", "pair", "swap", "keep", "drop"),
]


def _user_turn(engine: Engine, rng: random.Random, turn: int, tokens: int) -> str:
    """A deterministic user message of about `tokens` tokens."""
    words = [f"Game {turn}:"]
    while len(engine.tokenizer(" ".join(words), add_special_tokens=False)["input_ids"]) < tokens:
        words.append(rng.choice(_WORDS))
    return " ".join(words)


def _conversation_prefill(
    engine: Engine, user_turns: list[str], replies: list[str] | None, max_tokens: int
) -> tuple[list[int], list[str], list[tuple[int, ...]]]:
    """Play the conversation; per-turn computed prefill, reply texts and reply tokens."""
    messages: tuple[Mapping[str, str], ...] = ()
    computed: list[int] = []
    texts: list[str] = []
    tokens: list[tuple[int, ...]] = []
    for turn, user in enumerate(user_turns):
        messages = (*messages, {"role": "user", "content": user})
        request = GenerationRequest(messages, SamplingParams(max_tokens=max_tokens))
        result = engine.generate([request])[0]
        computed.append(result.computed_tokens)
        texts.append(result.text)
        tokens.append(result.tokens)
        reply = result.text if replies is None else replies[turn]
        messages = (*messages, {"role": "assistant", "content": reply})
    return computed, texts, tokens


def prefill_reuse(
    engine: Engine | None = None,
    turns: int = 30,
    user_tokens: int = 60,
    max_tokens: int = 16,
    seed: int = 0,
) -> dict[str, Any]:
    """Total and per-turn prefill tokens for one append-only conversation, reuse on vs off."""
    base = engine or Engine.from_pretrained(embedded_checkpoint())
    rng = random.Random(seed)
    user_turns = [_user_turn(base, rng, turn + 1, user_tokens) for turn in range(turns)]

    reuse = Engine(base.model, base.tokenizer, EngineConfig(kv_reuse=True))
    start = time.perf_counter()
    on, replies, on_tokens = _conversation_prefill(reuse, user_turns, None, max_tokens)
    on_s = time.perf_counter() - start

    recompute = Engine(base.model, base.tokenizer, EngineConfig(kv_reuse=False))
    start = time.perf_counter()
    off, _, off_tokens = _conversation_prefill(recompute, user_turns, replies, max_tokens)
    off_s = time.perf_counter() - start

    return {
        "turns": turns,
        "prefill_tokens_reuse_on": sum(on),
        "prefill_tokens_reuse_off": sum(off),
        "prefill_ratio": sum(off) / sum(on),
        "per_turn_prefill_on": on,
        "per_turn_prefill_off": off,
        "seconds_reuse_on": on_s,
        "seconds_reuse_off": off_s,
        "replies_identical": on_tokens == off_tokens,
    }


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
    print("embedded load:", embedded_load_times())
    print("prefill reuse:", prefill_reuse())


if __name__ == "__main__":
    main()
