"""A batch prefill over the token budget runs in column slices cut from the right, and gives
the replies of one pass (tiny Llama and tiny Gemma 3 with a sliding window)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from gapscope.models import engine as engine_module
from gapscope.models.engine import Engine, EngineConfig, GenerationRequest, SamplingParams

Messages = tuple[Mapping[str, str], ...]

PROMPTS: list[Messages] = [
    ({"role": "user", "content": " ".join(f"w{i}" for i in range(40))},),
    ({"role": "user", "content": "w3 w4"},),
    ({"role": "user", "content": " ".join(f"w{i % 17}" for i in range(25))},),
]


@contextmanager
def fed_widths(engine: Engine) -> Iterator[list[int]]:
    """The number of new columns of each forward pass, in call order."""
    widths: list[int] = []

    def record(module: Any, args: Any, kwargs: dict[str, Any]) -> None:
        widths.append(int(kwargs["input_ids"].shape[1]))

    handle = engine.model.register_forward_pre_hook(record, with_kwargs=True)
    try:
        yield widths
    finally:
        handle.remove()


def replies(engine: Engine, prompts: list[Messages]) -> list[tuple[int, ...]]:
    params = SamplingParams(max_tokens=8, ignore_eos=True)
    results = engine.generate([GenerationRequest(p, params, hooks=None) for p in prompts])
    return [result.tokens for result in results]


def engine_on(checkpoint: Path, prefill_tokens: int) -> Engine:
    config = EngineConfig(kv_reuse=False, prefill_tokens=prefill_tokens)
    return Engine.from_pretrained(checkpoint, device="cpu", config=config)


@pytest.mark.parametrize("model", ["llama", "gemma3"])
def test_sliced_prefill_gives_the_replies_of_one_pass(
    model: str,
    tiny_checkpoint: Path,
    tiny_gemma_checkpoint: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    checkpoint = tiny_checkpoint if model == "llama" else tiny_gemma_checkpoint
    monkeypatch.setattr(engine_module, "PREFILL_COLUMNS", 7)
    whole = engine_on(checkpoint, prefill_tokens=0)
    sliced = engine_on(checkpoint, prefill_tokens=16)
    span = max(len(whole.render(p)) for p in PROMPTS)
    with fed_widths(sliced) as widths:
        got = replies(sliced, PROMPTS)
    # slices of 7 columns from the right: the first takes the remainder, then one step a token
    remainder = span % 7 or 7
    assert widths[: -(8 - 1)] == [remainder] + [7] * ((span - remainder) // 7)
    assert widths[-(8 - 1) :] == [1] * 7
    assert got == replies(whole, PROMPTS)
    # each row alone: the short prompt lies in padding for the first slices, and still matches
    for prompt, tokens in zip(PROMPTS, got, strict=True):
        assert replies(whole, [prompt]) == [tokens]


def test_a_batch_within_the_budget_is_fed_at_once(
    tiny_checkpoint: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine_module, "PREFILL_COLUMNS", 7)
    engine = engine_on(tiny_checkpoint, prefill_tokens=10_000)
    span = max(len(engine.render(p)) for p in PROMPTS)
    with fed_widths(engine) as widths:
        replies(engine, PROMPTS)
    assert widths[0] == span


def test_a_sliced_row_reusing_a_cached_prefix_matches_recomputing(
    tiny_checkpoint: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine_module, "PREFILL_COLUMNS", 5)
    cached = Engine.from_pretrained(
        tiny_checkpoint, device="cpu", config=EngineConfig(prefill_tokens=8)
    )
    first = PROMPTS[0]
    params = SamplingParams(max_tokens=4)
    reply = cached.generate([GenerationRequest(first, params, hooks=None)])[0]
    longer: Messages = (
        *first,
        {"role": "assistant", "content": reply.text},
        {"role": "user", "content": " ".join(f"w{i}" for i in range(30))},
    )
    batch = [longer, PROMPTS[1]]
    with fed_widths(cached) as widths:
        got = replies(cached, batch)
    assert widths[0] < widths[1] == 5  # sliced, though the first row reused its prefix
    assert cached.stats.prefill_reused > 0
    assert got == replies(engine_on(tiny_checkpoint, prefill_tokens=0), batch)
