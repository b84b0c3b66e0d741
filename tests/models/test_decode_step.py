"""A decoder layer's decode step in a few kernel calls (``decode_step``, the ``gguf`` format's)
computes what the lean layers' ops and transformers' forward compute, bit for bit.

Every comparison runs the same engine three ways: with the decode step, without it (the lean
layers' ops), and with transformers' own layer forward; over a padded batch, Gemma 3's
sliding-window layers past their window, steering hooks, and rows joining a running batch
with reused prefixes. Each also counts the layers the decode step took, so a comparison
cannot pass because it never ran.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import Tensor

from gapscope.models import decode_step, lean_layers
from gapscope.models.engine import Engine, EngineConfig, GenerationRequest, SamplingParams
from gapscope.models.gguf_codes import apply_codes
from gapscope.models.row_attention import KERNEL_ROW_ATTENTION, ROW_ATTENTION
from gapscope.models.steering import steering
from tests.models.test_block_linear import codes_for
from tests.models.test_lean_layers import _distinct_norms, _logits_of
from tests.models.tiny import TINY_SLIDING_WINDOW, build_tiny_checkpoint
from tests.steer.conftest import random_vector

PROMPTS = [
    "w1 w2 w3 w4 w5 w6 w7 w8 w9 w10",
    "w9",
    "w4 w4 w5 w6 w7 w8 w10 w11",
    "w20 w21",
]


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Tiny Llama and Gemma 3 wide enough for the kernel (inputs a multiple of 64, heads of
    16: the Llama's 64 / 4, the Gemma's set)."""
    return {
        architecture: build_tiny_checkpoint(
            tmp_path_factory.mktemp(f"tiny-{architecture}"),
            architecture=architecture,
            hidden_size=64,
            head_dim=16,
        )
        for architecture in ("llama", "gemma3")
    }


def _gguf_engine(
    checkpoint: Path, layout: tuple[int, bool] | None = (32, True), **config: Any
) -> Engine:
    """An engine whose linear layers are codes, as the ``gguf`` format loads them: laid out
    alike within a layer (as a GGUF's are) so that its projections stack; random norms."""
    loaded = Engine.from_pretrained(checkpoint, device="cpu")
    assert apply_codes(loaded.model, codes_for(loaded.model, seed=3, layout=layout)) > 0
    _distinct_norms(loaded.model)
    lean_layers.uninstall(loaded.decoder_layers())
    engine = Engine(loaded.model, loaded.tokenizer, EngineConfig(**{"kv_reuse": False, **config}))
    assert engine.model.config._attn_implementation == KERNEL_ROW_ATTENTION
    return engine


def _requests(max_tokens: int = 9) -> list[GenerationRequest]:
    params = SamplingParams(max_tokens=max_tokens, ignore_eos=True)
    return [GenerationRequest(({"role": "user", "content": p},), params) for p in PROMPTS]


@contextmanager
def _counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The layers the decode step took (``[taken]``)."""
    taken = [0]
    function = decode_step.decode_layer

    def counting(*args: Any) -> Any:
        out = function(*args)
        taken[0] += out is not None
        return out

    monkeypatch.setattr(decode_step, "decode_layer", counting)
    yield taken
    monkeypatch.undo()


@contextmanager
def _without_decode_step(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(decode_step, "decode_layer", lambda *args: None)
    yield
    monkeypatch.undo()


def _logits_per_step(engine: Engine, requests: list[GenerationRequest]) -> list[Tensor]:
    return _logits_of(engine, lambda: engine.generate(requests))


def _three_ways(
    engine: Engine, run: Callable[[], Any], monkeypatch: pytest.MonkeyPatch
) -> tuple[Any, Any, Any, int]:
    """``run``'s result with the decode step, without it, with transformers' layers; and how
    many layer steps the decode step took."""
    with _counted(monkeypatch) as taken:
        fused = run()
    engine.clear_cache()
    with _without_decode_step(monkeypatch):
        lean = run()
    engine.clear_cache()
    layers = engine.decoder_layers()
    lean_layers.uninstall(layers)
    try:
        stock = run()
    finally:
        lean_layers.install(layers)
    engine.clear_cache()
    return fused, lean, stock, taken[0]


@pytest.mark.parametrize("architecture", ["llama", "gemma3"])
def test_every_decode_step_of_a_padded_batch_is_the_lean_layers_and_transformers_bitwise(
    architecture: str, checkpoints: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = _gguf_engine(checkpoints[architecture])
    if architecture == "gemma3":  # the longest prompt and its reply run past the window
        assert len(engine.render(_requests()[0].messages)) > TINY_SLIDING_WINDOW
    fused, lean, stock, taken = _three_ways(
        engine, lambda: _logits_per_step(engine, _requests()), monkeypatch
    )
    assert taken == 8 * len(engine.decoder_layers())  # every layer of the 8 decode steps
    assert len(fused) == len(lean) == len(stock) == 9
    for step, (a, b, c) in enumerate(zip(fused, lean, stock, strict=True)):
        assert torch.equal(a, b), f"step {step}"
        assert torch.equal(a, c), f"step {step}"


def test_steered_replies_are_the_same_and_reach_the_decode_step(
    checkpoints: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = _gguf_engine(checkpoints["llama"])
    vector = random_vector(engine, (0, 1))

    def steered(alpha: float) -> Callable[[], list[tuple[int, ...]]]:
        def run() -> list[tuple[int, ...]]:
            with steering(vector, alpha):
                return [r.tokens for r in engine.generate(_requests())]

        return run

    fused, lean, stock, taken = _three_ways(engine, steered(-3.0), monkeypatch)
    assert taken > 0
    assert fused == lean == stock
    assert fused != steered(0.0)()  # the steering reached the decode steps' outputs


@pytest.mark.parametrize("architecture", ["llama", "gemma3"])
def test_rows_joining_a_running_batch_over_reused_prefixes(
    architecture: str, checkpoints: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two rows a batch and KV reuse: later requests join as rows finish (their keys and
    values appended to the cache's rows) and reuse the prefixes of earlier ones."""
    engine = _gguf_engine(checkpoints[architecture], kv_reuse=True, batch_size=2)
    lengths = [3, 9, 5, 7]

    def replies() -> tuple[list[tuple[int, ...]], list[Tensor]]:
        requests = [
            GenerationRequest(
                ({"role": "user", "content": p},),
                SamplingParams(max_tokens=n, ignore_eos=True),
            )
            for p, n in zip(PROMPTS * 2, lengths * 2, strict=True)
        ]
        replies: list[tuple[int, ...]] = []

        def generate() -> None:
            replies.extend(r.tokens for r in engine.generate(requests))

        return replies, _logits_of(engine, generate)

    fused, lean, stock, taken = _three_ways(engine, replies, monkeypatch)
    assert taken > 0
    assert fused[0] == lean[0] == stock[0]
    assert len(fused[1]) == len(lean[1]) == len(stock[1])
    for a, b, c in zip(fused[1], lean[1], stock[1], strict=True):
        assert torch.equal(a, b) and torch.equal(a, c)


@pytest.mark.parametrize(
    "case", ["float32 weights", "unstacked codes", "sdpa attention", "gradients on"]
)
def test_where_the_kernel_would_not_take_every_op_the_lean_layers_run(
    case: str, checkpoints: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    checkpoint = checkpoints["llama"]
    if case == "float32 weights":
        engine = Engine.from_pretrained(checkpoint, device="cpu")
    else:
        engine = _gguf_engine(checkpoint, layout=None if case == "unstacked codes" else (32, True))
    if case == "sdpa attention":
        engine.model.set_attn_implementation(ROW_ATTENTION)
    with _counted(monkeypatch) as taken:
        if case == "gradients on":
            _decode_one_step_with_grad(engine)
        else:
            engine.generate(_requests(4))
    assert taken[0] == 0


def _decode_one_step_with_grad(engine: Engine) -> None:
    """A prefill and a decode step of the model itself with gradients enabled (the engine
    decodes in inference mode)."""
    from gapscope.models.kvcache import GrowingCache

    ids = torch.tensor([engine.render(_requests()[0].messages)])
    cache = GrowingCache(capacity=ids.shape[1] + 2)
    with torch.enable_grad():
        out = engine.model(input_ids=ids, cache=cache, use_cache=True)
        step = out.logits[:, -1:].argmax(-1)
        engine.model(input_ids=step, cache=cache, use_cache=True)
