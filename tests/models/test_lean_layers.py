"""Llama and Gemma 3 layers without their sub-modules' call machinery (``lean_layers``) compute
transformers' forward bit for bit, and hooks still see what they saw.

The engine installs them on every Llama and Gemma 3 model it serves; a difference in one op
(an order, a dtype, a missing norm epsilon) would move every logit, so these compare bitwise:
a padded batch's prefill and decode logits through the engine's own cache and row attention, and the
replies of a steered batch. The tiny Gemma's sliding-window layers see a few tokens, so its
prompts and replies run past the window.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import Tensor, nn

from gapscope.models import lean_layers
from gapscope.models.block_linear import BlockLinear
from gapscope.models.engine import Engine, GenerationRequest, SamplingParams
from gapscope.models.gguf_codes import apply_codes
from gapscope.models.hooks import forward_hooks
from gapscope.models.steering import steering
from tests.models.test_block_linear import codes_for
from tests.models.tiny import build_tiny_checkpoint
from tests.steer.conftest import random_vector

PROMPTS = ["w1 w2 w3", "w9", "w4 w4 w5 w6 w7 w8 w10 w11", "w20 w21"]


def _requests(max_tokens: int = 10) -> list[GenerationRequest]:
    params = SamplingParams(max_tokens=max_tokens, ignore_eos=True)
    return [GenerationRequest(({"role": "user", "content": p},), params) for p in PROMPTS]


def _logits_per_step(engine: Engine) -> list[Tensor]:
    """Every forward pass's logits while the engine decodes the prompts as one batch."""
    return _logits_of(engine, lambda: engine.generate(_requests()))


def _logits_of(engine: Engine, run: Callable[[], Any]) -> list[Tensor]:
    """The logits of every forward pass ``run`` makes the engine take."""
    seen: list[Tensor] = []
    forward: Callable[..., Tensor] = engine._forward

    def recording(*args: Any) -> Tensor:
        logits = forward(*args)
        seen.append(logits.clone())
        return logits

    engine._forward = recording  # type: ignore[method-assign]
    try:
        run()
    finally:
        engine._forward = forward  # type: ignore[method-assign]
    return seen


def _with_and_without(engine: Engine, run: Callable[[], Any]) -> tuple[Any, Any]:
    layers = engine.decoder_layers()
    assert lean_layers.install(layers) == len(layers)
    lean = run()
    lean_layers.uninstall(layers)
    engine.clear_cache()
    stock = run()
    lean_layers.install(layers)
    return lean, stock


@pytest.fixture(scope="module")
def tiny64(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny Llama wide enough for the ``gguf`` kernel (inputs a multiple of 64)."""
    return build_tiny_checkpoint(tmp_path_factory.mktemp("tiny-64"), hidden_size=64)


@pytest.fixture(scope="module")
def tiny_gemma64(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny Gemma 3 wide enough for the ``gguf`` kernel."""
    return build_tiny_checkpoint(
        tmp_path_factory.mktemp("tiny-gemma-64"), architecture="gemma3", hidden_size=64
    )


def test_the_engine_installs_them_on_llama_and_gemma3_layers(
    tiny_checkpoint: Path, tiny_gemma_checkpoint: Path
) -> None:
    for checkpoint in (tiny_checkpoint, tiny_gemma_checkpoint):
        engine = Engine.from_pretrained(checkpoint, device="cpu")
        assert all("forward" in layer.__dict__ for layer in engine.decoder_layers())


def test_a_layer_with_a_part_of_another_class_keeps_transformers_forward(
    tiny_gemma_checkpoint: Path,
) -> None:
    """A swapped norm (a fine-tune's own class, say) may compute otherwise: no lean forward."""
    engine = Engine.from_pretrained(tiny_gemma_checkpoint, device="cpu")
    layers = engine.decoder_layers()
    lean_layers.uninstall(layers)
    layers[1].self_attn.k_norm = nn.LayerNorm(8)  # type: ignore[union-attr]
    assert lean_layers.install(layers) == len(layers) - 1
    assert "forward" not in layers[1].__dict__


def _distinct_norms(model: nn.Module) -> None:
    """Random weights for every norm: a tiny model's start equal (Gemma's at zero, which
    scales by one), and a lean layer that used one norm for another would go unseen."""
    generator = torch.Generator().manual_seed(5)
    with torch.no_grad():
        for name, weight in model.named_parameters():
            if "norm" in name:
                weight.copy_(torch.randn(weight.shape, generator=generator) * 0.5)


@pytest.mark.parametrize("architecture", ["llama", "gemma3"])
def test_a_padded_batch_prefills_and_decodes_bitwise_as_transformers(
    architecture: str, tiny_checkpoint: Path, tiny_gemma_checkpoint: Path
) -> None:
    checkpoint = tiny_checkpoint if architecture == "llama" else tiny_gemma_checkpoint
    engine = Engine.from_pretrained(checkpoint, device="cpu")
    _distinct_norms(engine.model)
    lean, stock = _with_and_without(engine, lambda: _logits_per_step(engine))
    assert len(lean) == len(stock) == 10  # the prefill and nine decode steps
    for a, b in zip(lean, stock, strict=True):
        assert torch.equal(a, b)


@pytest.mark.parametrize("architecture", ["llama", "gemma3"])
def test_gguf_weights_too(architecture: str, tiny64: Path, tiny_gemma64: Path) -> None:
    engine = Engine.from_pretrained(
        tiny64 if architecture == "llama" else tiny_gemma64, device="cpu"
    )
    assert apply_codes(engine.model, codes_for(engine.model, seed=3)) > 0
    assert any(isinstance(m, BlockLinear) for m in engine.model.modules())
    lean, stock = _with_and_without(engine, lambda: _logits_per_step(engine))
    for a, b in zip(lean, stock, strict=True):
        assert torch.equal(a, b)


@pytest.mark.parametrize("architecture", ["llama", "gemma3"])
def test_stacked_projections_decode_bitwise_as_transformers(
    architecture: str, tiny64: Path, tiny_gemma64: Path
) -> None:
    """Codes laid out alike within a layer, as a GGUF's are: the query/key/value and gate/up
    projections are stacked into one kernel call each, and the logits stay transformers'."""
    engine = Engine.from_pretrained(
        tiny64 if architecture == "llama" else tiny_gemma64, device="cpu"
    )
    codes = codes_for(engine.model, seed=4, layout=(32, True))
    assert apply_codes(engine.model, codes) > 0
    layers = engine.decoder_layers()
    lean_layers.install(layers)
    fused = [layer.forward.args[3] for layer in layers]  # type: ignore[attr-defined]
    assert all(f.qkv is not None and f.gate_up is not None for f in fused)
    lean, stock = _with_and_without(engine, lambda: _logits_per_step(engine))
    assert len(lean) == 10
    for a, b in zip(lean, stock, strict=True):
        assert torch.equal(a, b)


def test_steered_replies_are_transformers_and_decoder_layer_hooks_fire(tiny64: Path) -> None:
    engine = Engine.from_pretrained(tiny64, device="cpu")
    vector = random_vector(engine, (0, 1))

    def steered() -> list[tuple[int, ...]]:
        with steering(vector, -3.0):
            return [r.tokens for r in engine.generate(_requests())]

    lean, stock = _with_and_without(engine, steered)
    assert lean == stock
    with steering(vector, 0.0):
        plain = [r.tokens for r in engine.generate(_requests())]
    assert lean != plain  # the steering reached the lean layers' outputs


def test_a_hook_on_a_sub_module_sees_its_call(tiny_checkpoint: Path) -> None:
    """With a hook on a projection, the layer runs transformers' forward: the hook fires."""
    engine = Engine.from_pretrained(tiny_checkpoint, device="cpu")
    calls: list[Tensor] = []
    projection: nn.Module = engine.decoder_layers()[0].self_attn.q_proj  # type: ignore[union-attr]
    handle = projection.register_forward_hook(lambda m, args, out: calls.append(out))
    try:
        engine.generate(_requests(max_tokens=3))
    finally:
        handle.remove()
    assert len(calls) == 3  # the prefill and two decode steps


def test_layer_output_hooks_see_the_layer_output(tiny_checkpoint: Path) -> None:
    engine = Engine.from_pretrained(tiny_checkpoint, device="cpu")
    outputs: list[Tensor] = []

    def capture(module: nn.Module, args: tuple[Any, ...], output: Any) -> None:
        outputs.append(output if isinstance(output, Tensor) else output[0])

    with forward_hooks([(1, capture)]):
        engine.generate(_requests(max_tokens=2))
    assert len(outputs) == 2 and outputs[0].shape[-1] == engine.model.config.hidden_size
