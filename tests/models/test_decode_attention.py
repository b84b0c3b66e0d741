"""A decode step's attention in the kernel (``decode_attention``), the ``gguf`` format's.

It must compute what SDPA computes per row to within float rounding (shapes of SmolLM2,
Gemma 3, ungrouped heads; each row over its own columns of a padded cache, a scaling other
than the default), give a row the same bits alone, in any batch and at any thread count (a
reply must not depend on its batch), keep the softmax right where scores differ by far more
than exp's range, and leave every call it does not take to ``row_attention`` unchanged. The
engine runs it for the ``gguf`` format only; ``float32``, the reference, keeps SDPA.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from torch import Tensor, nn

from gapscope.models import lean_layers
from gapscope.models.block_linear import BlockLinear
from gapscope.models.decode_attention import decode_attention
from gapscope.models.engine import Engine, EngineConfig, GenerationRequest, SamplingParams
from gapscope.models.gguf_codes import apply_codes
from gapscope.models.row_attention import (
    KERNEL_ROW_ATTENTION,
    ROW_ATTENTION,
    kernel_row_attention_forward,
    row_attention_forward,
)
from tests.models.test_block_linear import codes_for
from tests.models.tiny import build_tiny_checkpoint

pytest.importorskip("gapscope.models.native_kernel").kernel()  # the kernel builds here


class _Attention(nn.Module):
    """What the attention functions read off a model's attention module."""

    is_causal = True

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.num_key_value_groups = groups


def _inputs(
    rows: int, heads: int, kv_heads: int, dim: int, length: int, seed: int
) -> tuple[Tensor, Tensor, Tensor]:
    """One query a row and a cache 7 columns longer than ``length`` (so the keys are views
    with the cache's strides, as the engine's are)."""
    generator = torch.Generator().manual_seed(seed)
    query = torch.randn(rows, heads, 1, dim, generator=generator)
    key = torch.randn(rows, kv_heads, length + 7, dim, generator=generator) * 2
    value = torch.randn(rows, kv_heads, length + 7, dim, generator=generator)
    return query, key[:, :, :length], value[:, :, :length]


def _padding_mask(starts: list[int], length: int) -> Tensor:
    """A decode step's boolean mask (True attends) for rows whose columns start at ``starts``."""
    columns = torch.arange(length)[None, :]
    return torch.stack([columns >= start for start in starts])[:, None]


SHAPES = [(9, 3, 64), (4, 1, 256), (4, 4, 32), (8, 1, 16)]
SCALING = 0.37
OPTIONS = {"dropout": 0.0, "scaling": SCALING, "sliding_window": None}


@pytest.mark.parametrize(("heads", "kv_heads", "dim"), SHAPES)
def test_each_row_is_sdpa_over_its_own_columns_within_rounding(
    heads: int, kv_heads: int, dim: int
) -> None:
    """SmolLM2's heads (9 over 3), Gemma 3's (4 over 1, 256 wide), ungrouped, and a group of
    8; rows of 1 to 301 columns of a 301-column cache; a scaling other than SDPA's default."""
    starts = [0, 300, 157, 12]
    query, key, value = _inputs(len(starts), heads, kv_heads, dim, 301, seed=dim)
    module = _Attention(heads // kv_heads)
    mask = _padding_mask(starts, 301)
    got, _ = kernel_row_attention_forward(module, query, key, value, mask, **OPTIONS)
    expected, _ = row_attention_forward(module, query, key, value, mask, **OPTIONS)
    assert got.shape == expected.shape == (len(starts), 1, heads, dim)
    assert got.is_contiguous()
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)
    assert not torch.equal(got, expected)  # the kernel's own sums, not SDPA's bits
    default, _ = row_attention_forward(module, query, key, value, mask, dropout=0.0)
    assert (got - default).abs().max() > 1e-3  # the scaling was used
    # the row of one column: its value, whatever the scores
    assert torch.equal(got[1, 0], value[1, torch.arange(heads) // (heads // kv_heads), 300])


def test_a_row_gets_the_same_bits_alone_in_any_batch_and_at_any_thread_count() -> None:
    starts = [5, 0, 200, 31, 64, 2, 150, 99]
    query, key, value = _inputs(len(starts), 9, 3, 64, 256, seed=1)
    batched = decode_attention(query, key, value, starts, 3, SCALING)
    assert batched is not None
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one_thread = decode_attention(query, key, value, starts, 3, SCALING)
    finally:
        torch.set_num_threads(threads)
    assert one_thread is not None and torch.equal(one_thread, batched)
    for row, start in enumerate(starts):
        alone = decode_attention(
            query[row : row + 1], key[row : row + 1], value[row : row + 1], [start], 3, SCALING
        )
        assert alone is not None and torch.equal(alone[0], batched[row]), f"row {row}"


def test_the_softmax_holds_where_scores_are_far_apart() -> None:
    """Scores from -1e4 to 0 after the maximum is taken out: weights that underflow are 0,
    not NaN, and the result is the float64 softmax's to float rounding."""
    query, key, value = _inputs(1, 2, 1, 16, 40, seed=2)
    key = key.clone()
    key[0, 0, :, :] = 0.0
    key[0, 0, :, 0] = torch.linspace(-1000.0, 1.0, 40)  # scores down to far below exp's range
    query = query.clone()
    query[0, :, 0, :] = 0.0
    query[0, 0, 0, 0] = 10.0
    query[0, 1, 0, 0] = 0.01
    got = decode_attention(query, key, value, [0], 2, 1.0)
    assert got is not None and torch.isfinite(got).all()
    scores = (query[0, :, 0].double() @ key[0, 0].double().T).softmax(-1)
    expected = scores @ value[0, 0].double()
    torch.testing.assert_close(got[0, 0].double(), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "case", ["hole in the mask", "softcap", "group of 16", "dim 24", "bf16", "two queries"]
)
def test_calls_the_kernel_does_not_take_are_row_attentions(case: str) -> None:
    heads, kv_heads, dim, queries = 4, 2, 32, 1
    if case == "group of 16":
        heads, kv_heads = 16, 1
    if case == "dim 24":
        dim = 24
    query, key, value = _inputs(3, heads, kv_heads, dim, 50, seed=3)
    if case == "two queries":
        query = torch.cat([query, query], dim=2)
        queries = 2
    mask = _padding_mask([0, 10, 40], 50)
    if queries == 2:
        mask = mask.expand(3, 1, 2, 50)
    options = dict(OPTIONS)
    if case == "hole in the mask":
        mask = mask.clone()
        mask[0, 0, :, 20] = False
    if case == "softcap":
        options["softcap"] = 30.0
    if case == "bf16":
        query, key, value = (t.bfloat16() for t in (query, key, value))
    module = _Attention(heads // kv_heads)
    if case == "softcap":  # transformers' SDPA refuses it; so must this
        with pytest.raises(ValueError, match="softcap"):
            kernel_row_attention_forward(module, query, key, value, mask, **options)
        return
    got, _ = kernel_row_attention_forward(module, query, key, value, mask, **options)
    expected, _ = row_attention_forward(module, query, key, value, mask, **options)
    assert torch.equal(got, expected)


@pytest.fixture(scope="module")
def tiny64(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny Llama wide enough for the ``gguf`` kernel (inputs a multiple of 64)."""
    return build_tiny_checkpoint(tmp_path_factory.mktemp("tiny-64"), hidden_size=64)


def _gguf_engine(checkpoint: Path) -> Engine:
    """An engine on ``checkpoint`` whose linear layers are codes, as the gguf format loads
    (no KV reuse: each run computes its own keys and values)."""
    loaded = Engine.from_pretrained(checkpoint, device="cpu")
    assert loaded.model.config._attn_implementation == ROW_ATTENTION
    assert apply_codes(loaded.model, codes_for(loaded.model, seed=3)) > 0
    lean_layers.uninstall(loaded.decoder_layers())
    return Engine(loaded.model, loaded.tokenizer, EngineConfig(kv_reuse=False))


def _kernel_calls(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each attention call ``row_attention`` makes from now on ran in the kernel."""
    from gapscope.models import row_attention

    taken: list[bool] = []

    def counting(*args: Any) -> Tensor | None:
        output = decode_attention(*args)
        taken.append(output is not None)
        return output

    monkeypatch.setattr(row_attention, "decode_attention", counting)
    return taken


def test_the_gguf_format_decodes_in_the_kernel_and_a_reply_does_not_depend_on_its_batch(
    tiny64: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every layer of every decode step in the kernel; each prompt's reply, and its decode
    steps' logits to float rounding, the same batched with others and alone (the prefill's
    BLAS products may round a row differently by batch, as the module docstring says of
    ``row_attention``; the kernel's own sums do not: tested above)."""
    engine = _gguf_engine(tiny64)
    assert engine.weight_format == "gguf"
    assert any(isinstance(m, BlockLinear) for m in engine.model.modules())
    assert engine.model.config._attn_implementation == KERNEL_ROW_ATTENTION
    assert str(engine.info()["attention"]).startswith("kernel in decode steps")  # in every log
    taken = _kernel_calls(monkeypatch)
    params = SamplingParams(max_tokens=8, ignore_eos=True)
    prompts = ["w1 w2 w3", "w9", "w4 w4 w5 w6 w7 w8 w10 w11", "w20 w21"]
    requests = [GenerationRequest(({"role": "user", "content": p},), params) for p in prompts]
    logits: list[Tensor] = []
    forward = engine._forward

    def recording(*args: Tensor) -> Tensor:
        out = forward(*args)
        logits.append(out.clone())
        return out

    monkeypatch.setattr(engine, "_forward", recording)
    replies = engine.generate(requests)
    batched = logits[1:]  # the decode steps, 4 rows each
    assert len(taken) == 7 * len(engine.decoder_layers()) and all(taken)
    for row, request in enumerate(requests):
        logits.clear()
        (alone,) = engine.generate([request])
        assert alone.tokens == replies[row].tokens, f"row {row}"
        assert len(logits[1:]) == len(batched) == 7
        for a, b in zip(logits[1:], batched, strict=True):
            torch.testing.assert_close(a[0], b[row], rtol=1e-5, atol=1e-4)


def test_the_float32_format_keeps_sdpa(tiny64: Path) -> None:
    engine = Engine.from_pretrained(tiny64, device="cpu")
    assert engine.weight_format == "float32"
    assert engine.model.config._attn_implementation == ROW_ATTENTION


@pytest.mark.parametrize("architecture", ["llama", "gemma3"])
def test_the_kernel_decodes_as_sdpa_does_to_rounding_past_a_sliding_window(
    architecture: str, tiny64: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tiny Gemma 3's sliding layers see a few tokens, so these decode steps attend over
    a window that starts inside each row, beside its full layers: every decode step's logits
    with the kernel are SDPA's to float rounding, and the greedy replies the same. (Its heads
    are 16 wide: the kernel takes no narrower, and with the tiny models' 8 this compared
    SDPA with itself.)"""
    checkpoint = tiny64
    if architecture == "gemma3":
        checkpoint = build_tiny_checkpoint(
            tmp_path, architecture="gemma3", hidden_size=64, head_dim=16
        )
    engine = _gguf_engine(checkpoint)
    assert engine.model.config._attn_implementation == KERNEL_ROW_ATTENTION
    taken = _kernel_calls(monkeypatch)
    params = SamplingParams(max_tokens=8, ignore_eos=True)
    prompts = ["w1 w2 w3 w4 w5 w6 w7 w8 w9 w10", "w9", "w4 w4 w5 w6 w7"]
    requests = [GenerationRequest(({"role": "user", "content": p},), params) for p in prompts]
    logits: dict[str, list[Tensor]] = {}
    forward = engine._forward
    for name in (KERNEL_ROW_ATTENTION, ROW_ATTENTION):
        engine.model.set_attn_implementation(name)
        seen = logits[name] = []

        def recording(*args: Tensor, seen: list[Tensor] = seen) -> Tensor:
            out = forward(*args)
            seen.append(out.clone())
            return out

        engine._forward = recording  # type: ignore[method-assign]
        engine.generate(requests)
    kernel, sdpa = logits[KERNEL_ROW_ATTENTION], logits[ROW_ATTENTION]
    assert len(kernel) == len(sdpa) == 8
    assert len(taken) == 7 * len(engine.decoder_layers()) and all(taken)
    assert torch.equal(kernel[0], sdpa[0])  # the prefill: SDPA in both
    for a, b in zip(kernel[1:], sdpa[1:], strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-4)
        assert torch.equal(a.argmax(-1), b.argmax(-1))
