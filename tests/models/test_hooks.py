"""Forward hooks apply only to requests made inside `forward_hooks`, and never leak."""

from __future__ import annotations

from typing import Any

import pytest
from torch import nn

from gapscope.models.engine import Engine, GenerationRequest, GenerationResult, SamplingParams
from gapscope.models.hooks import current_hooks, forward_hooks
from tests.models.conftest import EngineFactory

MESSAGES = ({"role": "user", "content": "w1 w2 w3 w4"},)


def shift(module: nn.Module, args: tuple[Any, ...], output: Any) -> Any:
    """Add a large constant to a block's hidden states (tuple or tensor outputs)."""
    if isinstance(output, tuple):
        return (output[0] + 3.0, *output[1:])
    return output + 3.0


def fail(module: nn.Module, args: tuple[Any, ...], output: Any) -> Any:
    raise RuntimeError("hook failed")


def ask(engine: Engine, messages: tuple[dict[str, str], ...] = MESSAGES) -> GenerationResult:
    return engine.generate([GenerationRequest(messages, SamplingParams(max_tokens=6))])[0]


def hook_count(engine: Engine) -> int:
    return sum(len(module._forward_hooks) for module in engine.model.modules())


def test_hooks_change_output_only_inside_the_context(make_engine: EngineFactory) -> None:
    engine = make_engine(kv_reuse=False)
    baseline = ask(engine)
    with forward_hooks([(0, shift)]):
        steered = ask(engine)
        assert hook_count(engine) == 0  # attached only while a batch runs
    after = ask(engine)
    assert steered.tokens != baseline.tokens
    assert after.tokens == baseline.tokens
    assert hook_count(engine) == 0


def test_module_paths_and_negative_indices_are_targets(make_engine: EngineFactory) -> None:
    engine = make_engine(kv_reuse=False)
    with forward_hooks([(-1, shift)]):
        by_index = ask(engine)
    with forward_hooks([("model.layers.1", shift)]):
        by_path = ask(engine)
    assert by_index.tokens == by_path.tokens != ask(engine).tokens


def test_hooks_are_removed_when_generation_fails(make_engine: EngineFactory) -> None:
    engine = make_engine()
    with forward_hooks([(0, shift), (1, fail)]), pytest.raises(RuntimeError, match="hook failed"):
        ask(engine)
    assert hook_count(engine) == 0


def test_bad_targets_give_clear_errors(make_engine: EngineFactory) -> None:
    engine = make_engine()
    with forward_hooks([(5, shift)]), pytest.raises(IndexError, match="2 decoder layers"):
        ask(engine)
    with forward_hooks([("model.nope", shift)]), pytest.raises(ValueError, match=r"model\.nope"):
        ask(engine)
    assert hook_count(engine) == 0


def test_hooked_requests_without_cache_key_bypass_the_kv_cache(
    make_engine: EngineFactory,
) -> None:
    engine = make_engine()
    plain = ask(engine)
    entries = len(engine.cache)
    with forward_hooks([(0, shift)]):
        hooked = ask(engine)
        again = ask(engine)
    assert hooked.reused_tokens == again.reused_tokens == 0
    assert len(engine.cache) == entries
    assert ask(engine).reused_tokens == plain.prompt_tokens - 1


def test_cache_key_shares_kv_only_within_the_same_hooks(make_engine: EngineFactory) -> None:
    engine = make_engine()
    reference = make_engine(kv_reuse=False)
    with forward_hooks([(0, shift)], cache_key="shift-3"):
        first = ask(engine)
        follow = (*MESSAGES, {"role": "assistant", "content": first.text}, *MESSAGES)
        second = ask(engine, follow)
        expected = ask(reference, follow)
    assert second.reused_tokens > 0
    assert second.tokens == expected.tokens
    assert ask(engine).reused_tokens == 0  # plain requests never see steered keys/values


def test_contexts_nest_and_restore() -> None:
    assert current_hooks() is None
    with forward_hooks([(0, shift)], cache_key="a") as outer:
        with forward_hooks([(1, shift)], cache_key="b") as inner:
            assert inner.hooks == ((0, shift), (1, shift))
            assert inner.cache_key == "a+b"
            with forward_hooks([(1, fail)]) as unkeyed:
                assert unkeyed.cache_key is None
        assert current_hooks() is outer
    assert current_hooks() is None


def test_requests_capture_the_hooks_active_where_they_are_made(
    make_engine: EngineFactory,
) -> None:
    engine = make_engine(kv_reuse=False)
    with forward_hooks([(0, shift)]):
        request = GenerationRequest(MESSAGES, SamplingParams(max_tokens=6))
    steered = engine.generate([request])[0]
    with forward_hooks([(0, shift)]):
        expected = ask(engine)
    assert steered.tokens == expected.tokens
