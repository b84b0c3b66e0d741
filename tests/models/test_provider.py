"""The Inspect provider end to end: `get_model("gapscope/hf/<dir>")` and its errors."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageUser,
    GenerateConfig,
    get_model,
)

import gapscope.models.providers  # noqa: F401  (registers the provider)
from gapscope.models.checkpoints import CheckpointError
from gapscope.models.inspect_api import GapscopeModelAPI, ModelArgs


def model_name(checkpoint: Path) -> str:
    return f"gapscope/hf/{checkpoint}"


def test_generate_end_to_end_with_kv_reuse(tiny_checkpoint: Path) -> None:
    model = get_model(
        model_name(tiny_checkpoint),
        config=GenerateConfig(max_tokens=5),
        memoize=False,
        batch_size="2",
        cache_entries=4,
    )
    assert isinstance(model.api, GapscopeModelAPI)
    assert model.api.args.batch_size == 2

    async def conversation() -> tuple[int, int, int, str]:
        messages: list[ChatMessage] = [ChatMessageUser(content="w1 w2 w3")]
        first = await model.generate(messages)
        messages += [ChatMessageAssistant(content=first.completion), ChatMessageUser(content="w4")]
        second = await model.generate(messages)
        assert second.usage is not None and first.usage is not None
        assert first.usage.output_tokens == 5
        assert first.stop_reason == "max_tokens"
        # every reply records what computed it: the format and its agreement with fp32
        assert first.metadata is not None
        info = first.metadata["gapscope_engine"]
        assert info["weight_format"] == "float32" and "default" in info["agreement_with_fp32"]
        assert info["attention"] == "sdpa per row"  # the reference's attention, stock SDPA
        # on the CPU the prefix cache is files, bounded at 2 GiB unless cache_mb says less
        assert info["cache_bytes"] == 2 << 30 and info["cache_in_files"] is True
        assert info["torch_threads"] >= 1
        return (
            first.usage.input_tokens,
            second.usage.input_tokens,
            second.usage.input_tokens_cache_read or 0,
            first.completion,
        )

    first_in, second_in, reused, text = asyncio.run(conversation())
    assert text.split() and all(word.startswith("w") for word in text.split())
    assert second_in > first_in
    assert reused == first_in + 5 - 1


def test_concurrent_generate_calls_match_one_by_one(tiny_checkpoint: Path) -> None:
    config = GenerateConfig(max_tokens=4)
    model = get_model(model_name(tiny_checkpoint), config=config, memoize=False, kv_reuse=False)
    prompts = [f"w{i} w{i + 2}" for i in range(5)]

    async def run_all() -> list[str]:
        outputs = await asyncio.gather(*(model.generate(p) for p in prompts))
        return [output.completion for output in outputs]

    async def run_each() -> list[str]:
        return [(await model.generate(p)).completion for p in prompts]

    assert asyncio.run(run_all()) == asyncio.run(run_each())


def test_missing_checkpoint_names_the_path_and_allow_download(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-checkpoint"
    with pytest.raises(CheckpointError) as error:
        get_model(model_name(missing), memoize=False)
    assert str(missing) in str(error.value)
    assert "allow_download=true" in str(error.value)


def test_uncached_hub_name_suggests_allow_download(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(CheckpointError, match="allow_download=true"):
        get_model("gapscope/hf/gapscope-test/not-a-model", memoize=False)


def test_model_args_are_validated(tiny_checkpoint: Path) -> None:
    with pytest.raises(ValueError, match="unknown gapscope model arg"):
        get_model(model_name(tiny_checkpoint), memoize=False, temperature_typo=1)
    with pytest.raises(ValueError, match="kv_reuse"):
        ModelArgs.parse({"kv_reuse": "maybe"})
    with pytest.raises(ValueError, match="batch_size"):
        ModelArgs.parse({"batch_size": "many"})
    with pytest.raises(ValueError, match="cache_mb >= 0"):
        ModelArgs.parse({"cache_mb": "-1"})
    assert ModelArgs.parse({"kv_reuse": "false", "allow_download": "true"}) == ModelArgs(
        kv_reuse=False, allow_download=True
    )


def test_unknown_model_names_are_rejected() -> None:
    with pytest.raises(ValueError, match="gapscope/embedded"):
        get_model("gapscope/llama", memoize=False)


def test_embedded_gemma_name_resolves_and_adds_its_stop_strings(
    tiny_checkpoint: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`gapscope/embedded/gemma3-270m` is a base model: its replies end at the next turn."""
    from gapscope.models import inspect_api
    from gapscope.models.embedded import GEMMA3_270M

    resolved: list[str] = []

    def fake_checkpoint(model: object) -> Path:
        resolved.append(getattr(model, "name", ""))
        return tiny_checkpoint

    monkeypatch.setattr(inspect_api, "embedded_checkpoint", fake_checkpoint)
    model = get_model("gapscope/embedded/gemma3-270m", memoize=False)
    assert isinstance(model.api, GapscopeModelAPI)
    assert resolved == ["gemma3-270m"]
    requests = []
    real_submit = model.api.engine.submit

    def spy(request: Any) -> Any:
        requests.append(request)
        return real_submit(request)

    monkeypatch.setattr(model.api.engine, "submit", spy)
    asyncio.run(model.generate("w1 w2", config=GenerateConfig(max_tokens=2, stop_seqs=["w9"])))
    assert requests[0].params.stop == ("w9", *GEMMA3_270M.stop)
    with pytest.raises(ValueError, match="unknown embedded model 'gemma2'"):
        get_model("gapscope/embedded/gemma2", memoize=False)
