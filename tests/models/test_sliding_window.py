"""KV-cache reuse on a model with interleaved sliding-window attention (tiny Gemma 3).

Sliding-window layers attend to the last few cache *columns*, so a reused prefix is
correct only if each row's real tokens sit in contiguous columns. Every test compares
the engine's next-token logits, step by step, with one plain forward pass over the
whole token sequence (no cache at all), on conversations longer than the window.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import torch

from gapscope.models.engine import (
    Engine,
    EngineConfig,
    GenerationRequest,
    GenerationResult,
    SamplingParams,
)
from tests.models.tiny import TINY_SLIDING_WINDOW

Messages = tuple[Mapping[str, str], ...]


@pytest.fixture
def gemma(tiny_gemma_checkpoint: Path) -> Engine:
    return Engine.from_pretrained(tiny_gemma_checkpoint, device="cpu", config=EngineConfig())


@contextmanager
def recorded_logits(engine: Engine) -> Iterator[list[torch.Tensor]]:
    """Each forward pass's last-position logits, `[rows, vocab]`, in call order."""
    calls: list[torch.Tensor] = []

    def record(module: Any, args: Any, output: Any) -> None:
        calls.append(output.logits[:, -1, :].float().clone())

    handle = engine.model.register_forward_hook(record)
    try:
        yield calls
    finally:
        handle.remove()


def reference_logits(engine: Engine, messages: Messages, result: GenerationResult) -> torch.Tensor:
    """Uncached logits before each generated token: one forward over prompt + reply."""
    ids = torch.tensor([engine.render(messages) + list(result.tokens)])
    with torch.inference_mode():
        logits = engine.model(input_ids=ids, use_cache=False).logits[0].float()
    start = result.prompt_tokens - 1
    return logits[start : start + len(result.tokens)]


def assert_matches_uncached(
    engine: Engine, batch: list[Messages], results: list[GenerationResult], calls: list[Any]
) -> None:
    """Row `i` of forward call `k` must equal the uncached logits of reply token `k`."""
    for row, (messages, result) in enumerate(zip(batch, results, strict=True)):
        cached = torch.stack([calls[step][row] for step in range(len(result.tokens))])
        torch.testing.assert_close(
            cached, reference_logits(engine, messages, result), rtol=1e-4, atol=1e-4
        )


def test_multi_turn_conversation_longer_than_the_window_matches_uncached(gemma: Engine) -> None:
    messages: Messages = ({"role": "system", "content": "w0"},)
    for turn in ("w1 w2 w3 w4", "w5 w6 w7", "w8 w9 w10 w11 w12", "w13 w14"):
        messages = (*messages, {"role": "user", "content": turn})
        with recorded_logits(gemma) as calls:
            result = gemma.generate([GenerationRequest(messages, SamplingParams(max_tokens=5))])[0]
        assert_matches_uncached(gemma, [messages], [result], calls)
        messages = (*messages, {"role": "assistant", "content": result.text})
    assert result.prompt_tokens > 4 * TINY_SLIDING_WINDOW
    assert result.reused_tokens > 3 * TINY_SLIDING_WINDOW  # the cache was really used


def test_batched_rows_with_different_cached_prefixes_match_uncached(gemma: Engine) -> None:
    histories: list[Messages] = [
        ({"role": "user", "content": "w1 w2 w3 w4 w5 w6 w7 w8"},),
        ({"role": "user", "content": "w9"},),
    ]
    warm = gemma.generate([GenerationRequest(h, SamplingParams(max_tokens=5)) for h in histories])
    batch: list[Messages] = [
        (*h, {"role": "assistant", "content": w.text}, {"role": "user", "content": "w20 w21"})
        for h, w in zip(histories, warm, strict=True)
    ] + [({"role": "user", "content": "w30 w31 w32"},)]
    # Equal reply lengths keep every row in the batch, so row i of each call is request i.
    requests = [GenerationRequest(m, SamplingParams(max_tokens=4)) for m in batch]
    with recorded_logits(gemma) as calls:
        results = gemma.generate(requests)
    assert len(calls) == 4
    assert len({r.reused_tokens for r in results}) == 3  # three prefix lengths in one batch
    assert max(r.prompt_tokens for r in results) > 3 * TINY_SLIDING_WINDOW
    assert_matches_uncached(gemma, batch, results, calls)
