"""The ``gguf`` CPU format's layers (``block_linear``): weights bitwise the codes' two-rounding
rebuild, prefill bitwise fp32's, decode close to fp32 and batch-invariant, and a tiny model
with codes put in (``gguf_codes.apply_codes``) reading and writing like its fp32 twin.

The kernel is built on first use (``native_kernel``); these tests need a C++ compiler.
"""

from __future__ import annotations

import copy
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from gapscope.models.block_linear import (
    BlockCodes,
    BlockEmbedding,
    BlockLinear,
    fits_kernel,
    fuse,
    pack_nibbles,
    unpack_nibbles,
)
from gapscope.models.gguf_codes import apply_codes, rebuild
from gapscope.models.weight_format import decode_bytes
from tests.models.tiny import tiny_model

INPUTS = 128
OUTPUTS = 40
"""Not a multiple of the kernel's 16-output chunks: the last chunk is a partial one."""


def _bits(tensor: Tensor) -> Tensor:
    return tensor.detach().contiguous().view(torch.int32)


def assert_bitwise(actual: Tensor, expected: Tensor) -> None:
    assert actual.shape == expected.shape and actual.dtype == expected.dtype == torch.float32
    assert torch.equal(_bits(actual), _bits(expected))


def random_codes(
    rows: int,
    inputs: int,
    block: int,
    *,
    offset: bool,
    seed: int,
    magnitude: float = 1.0,
) -> BlockCodes:
    """Random codes (every int8 value possible, zeros and both extremes included) with
    scales of either sign over several binades, about ``magnitude`` / 100 each, and (if
    ``offset``) offsets of either sign: weights of about ``magnitude``."""
    generator = torch.Generator().manual_seed(seed)
    codes = torch.randint(-128, 128, (rows, inputs), generator=generator, dtype=torch.int8)
    flat = codes.view(-1)
    flat[::7] = 0  # -0.0 = fl(negative scale * 0): kept as -0.0 without an offset
    flat[3::11] = -128
    flat[5::13] = 127
    blocks = (rows, inputs // block)
    binades = torch.randint(-3, 3, blocks, generator=generator).float().exp2()
    scale = torch.randn(blocks, generator=generator) * binades * (magnitude / 100)
    shift = torch.randn(blocks, generator=generator) * magnitude if offset else None
    return BlockCodes(codes, scale, shift)


# ---------------------------------------------------------------- BlockLinear on random codes

LAYOUTS = [(block, offset) for block in (16, 32) for offset in (False, True)]


@pytest.fixture(params=LAYOUTS, ids=[f"block{b}-{'offset' if o else 'scale'}" for b, o in LAYOUTS])
def layer(request: pytest.FixtureRequest) -> BlockLinear:
    block, offset = request.param
    codes = random_codes(OUTPUTS, INPUTS, block, offset=offset, seed=block + offset)
    assert fits_kernel(codes) and codes.block == block
    assert bool((codes.scale < 0).any())
    return BlockLinear(codes, bias=None)


def test_weight_is_the_two_rounding_rebuild_bitwise(layer: BlockLinear) -> None:
    expected = rebuild(layer.block_codes)
    assert_bitwise(layer.weight, expected)
    # the rows a lookup selects, in any order and repeated
    rows = torch.tensor([5, 0, 39, 5, 17])
    assert_bitwise(layer.block_codes.dequantize(rows), expected[rows])


def test_prefill_is_fp32s_product_bitwise(layer: BlockLinear) -> None:
    x = torch.randn(2, 5, INPUTS, generator=torch.Generator().manual_seed(1))
    with torch.inference_mode():
        assert_bitwise(layer(x), F.linear(x, rebuild(layer.block_codes)))


def test_decode_is_within_float_rounding_of_fp32(layer: BlockLinear) -> None:
    x = torch.randn(8, 1, INPUTS, generator=torch.Generator().manual_seed(2))
    weight = rebuild(layer.block_codes)
    with torch.inference_mode():
        out, reference = layer(x), F.linear(x, weight)
    assert out.shape == (8, 1, OUTPUTS)
    # relative to the sum of the products' magnitudes (the scale of an fp32 sum's rounding
    # error), so outputs that cancel to near zero are held to the same standard
    magnitude = F.linear(x.abs(), weight.abs())
    assert bool(((out - reference).abs() <= 1e-5 * magnitude).all())


def test_a_decoded_row_gives_the_same_bits_alone_and_in_any_batch(layer: BlockLinear) -> None:
    generator = torch.Generator().manual_seed(3)
    rows = torch.randn(9, 1, INPUTS, generator=generator)
    rows = rows * torch.logspace(-2, 2, 9)[:, None, None]  # very different magnitudes
    with torch.inference_mode():
        alone = [layer(rows[i : i + 1]) for i in range(9)]
        for size in range(1, 10):
            # rows at other places of the batch (and of the kernel's groups of 4)
            chosen = torch.randperm(9, generator=generator)[:size]
            batched = layer(rows[chosen])
            flat = layer(rows[chosen, 0])  # a 2-D input: one position per row as well
            for place, row in enumerate(chosen.tolist()):
                assert_bitwise(batched[place : place + 1], alone[row])
                assert_bitwise(flat[place : place + 1], alone[row][0])


# ------------------------------------------------------------------ the weights are not an fma


def _fma_rounds_differently(scale: float, codes: np.ndarray, offset: float) -> np.ndarray:
    """Which ``codes`` give ``fl(fl(scale * code) + offset)`` != ``fl(scale * code + offset)``
    (float32; the right side rounded once, as an fma would)."""
    s, o = np.float32(scale), np.float32(offset)
    twice = (s * codes.astype(np.float32)) + o
    once = (np.float64(s) * codes.astype(np.float64) + np.float64(o)).astype(np.float32)
    return np.asarray(twice != once)


def _fma_codes(rows: int, inputs: int, block: int, seed: int) -> tuple[BlockCodes, np.ndarray]:
    """Codes, scales and offsets every weight of which an fma would round differently;
    returns them with the fma's weights."""
    rng = np.random.default_rng(seed)
    every_code = np.arange(-128, 128)
    codes = np.empty((rows, inputs), dtype=np.int8)
    scale = np.empty((rows, inputs // block), dtype=np.float32)
    offset = np.empty_like(scale)
    for row in range(rows):
        for b in range(inputs // block):
            while True:
                s = np.float32(
                    rng.uniform(0.5, 2.0) * rng.choice([-1, 1]) * 2.0 ** rng.integers(-8, 4)
                )
                o = np.float32(rng.uniform(-128, 128) * s)
                differ = every_code[_fma_rounds_differently(float(s), every_code, float(o))]
                if differ.size >= 8:
                    break
            codes[row, b * block : (b + 1) * block] = rng.choice(differ, size=block)
            scale[row, b], offset[row, b] = s, o
    values = codes.astype(np.float64).reshape(rows, -1, block)
    exact = scale[:, :, None].astype(np.float64) * values + offset[:, :, None]
    # the float64 sums are exact (so the float32 rounding below is the fma's one rounding)
    for s, c, o, e in zip(
        np.repeat(scale.reshape(-1), block),
        values.reshape(-1),
        np.repeat(offset.reshape(-1), block),
        exact.reshape(-1),
        strict=True,
    ):
        assert Fraction(float(s)) * int(c) + Fraction(float(o)) == Fraction(float(e))
    fused = exact.astype(np.float32).reshape(rows, inputs)
    return (
        BlockCodes(torch.from_numpy(codes), torch.from_numpy(scale), torch.from_numpy(offset)),
        fused,
    )


@pytest.mark.parametrize("block", [16, 32])
def test_decode_rebuilds_each_weight_with_two_roundings_not_an_fma(block: int) -> None:
    codes, fused = _fma_codes(rows=20, inputs=64, block=block, seed=block)
    twice = rebuild(codes)
    assert bool((_bits(twice).numpy() != fused.view(np.int32)).all())  # the test can tell
    layer = BlockLinear(codes, bias=None)
    columns = []
    with torch.inference_mode():
        for k in range(64):
            unit = torch.zeros(1, 1, 64)
            unit[0, 0, k] = 1.0  # out = w[:, k]: 1 * w + exact zeros, one rounding-free sum
            columns.append(layer(unit)[0, 0])
    decoded = torch.stack(columns, dim=1)
    assert_bitwise(decoded, twice)
    assert bool((_bits(decoded).numpy() != fused.view(np.int32)).all())


# ---------------------------------------------------------------------------- BlockEmbedding


@pytest.mark.parametrize("offset", [False, True])
def test_embedding_looks_up_the_rebuilt_rows_bitwise(offset: bool) -> None:
    codes = random_codes(30, 64, 32, offset=offset, seed=7)
    ids = torch.tensor([[3, 0, 29, 3, 11], [7, 7, 1, 28, 0]])
    weight = rebuild(codes)
    plain = BlockEmbedding(codes)
    assert_bitwise(plain.weight, weight)
    with torch.inference_mode():
        assert_bitwise(plain(ids), F.embedding(ids, weight))
        # Gemma 3's scaled embedding: rows * embed_scale.to(rows.dtype), here not a power of 2
        embed_scale = torch.tensor(48.0**0.5, dtype=torch.bfloat16)
        scaled = BlockEmbedding(codes, embed_scale)
        expected = F.embedding(ids, weight) * embed_scale.to(torch.float32)
        assert not torch.equal(expected, F.embedding(ids, weight))
        assert_bitwise(scaled(ids), expected)


# ------------------------------------------------------------------ a tiny model, codes put in


def codes_for(
    model: nn.Module,
    seed: int = 0,
    *,
    layers: float = 0.5,
    ends: float = 1.0,
    layout: tuple[int, bool] | None = None,
) -> dict[str, BlockCodes]:
    """Random codes for every linear weight and input embedding of ``model`` (a tied output
    head gets none: it reads the embedding's), whose rebuilt weights are copied into
    ``model`` so that its fp32 weights are the codes'. Weights of about ``layers`` in the
    decoder layers, ``ends`` in the embedding and output head: large enough for logits that
    greedy decoding does not tip over on float noise, and for varied continuations. Blocks
    of 16 or 32, with offsets or not, vary from weight to weight unless ``layout`` (block,
    offset) fixes them, as a GGUF's do within a layer (the case of stacked projections)."""
    found: dict[str, BlockCodes] = {}
    seen: set[int] = set()
    for index, (name, module) in enumerate(model.named_modules()):
        if not isinstance(module, nn.Linear | nn.Embedding):
            continue
        weight = module.weight
        if id(weight) in seen:
            continue
        seen.add(id(weight))
        rows, inputs = (int(n) for n in weight.shape)
        large = name == "lm_head" or isinstance(module, nn.Embedding)
        codes = random_codes(
            rows,
            inputs,
            layout[0] if layout else 16 if index % 2 else 32,
            offset=layout[1] if layout else index % 3 == 0,
            seed=seed * 1000 + index,
            magnitude=ends if large else layers,
        )
        with torch.no_grad():
            weight.copy_(rebuild(codes))
        found[f"{name}.weight"] = codes
    return found


def _model(architecture: str, layers: int, **options: Any) -> Any:
    """A tiny model 64 wide (the kernel's inputs are multiples of 64; Gemma's heads of 16
    make its attention output 64 wide too)."""
    torch.manual_seed(0)
    return tiny_model(architecture, vocab_size=67, hidden_size=64, layers=layers, **options)


MODELS = {
    "llama": lambda: _model("llama", 2),
    "llama-tied": lambda: _model("llama", 2, tied=True),
    "gemma3-tied": lambda: _model("gemma3", 4, tied=True, head_dim=16),
}


@pytest.mark.parametrize("architecture", list(MODELS))
def test_a_model_with_codes_prefills_bitwise_and_decodes_as_fp32(architecture: str) -> None:
    fp32 = MODELS[architecture]().eval()
    codes = codes_for(fp32)
    tied = fp32.lm_head.weight is fp32.model.embed_tokens.weight
    assert tied == architecture.endswith("tied")
    linears = sum(type(m) is nn.Linear for m in fp32.modules())
    coded = copy.deepcopy(fp32)

    replaced = apply_codes(coded, codes)

    blocks = [m for m in coded.modules() if isinstance(m, BlockLinear | BlockEmbedding)]
    assert replaced == len(blocks) == linears + 1  # every linear layer and the embedding
    assert not any(type(m) is nn.Linear for m in coded.modules())
    assert isinstance(coded.lm_head, BlockLinear)
    assert isinstance(coded.model.embed_tokens, BlockEmbedding)
    shared = coded.lm_head.codes.data_ptr() == coded.model.embed_tokens.codes.data_ptr()
    assert shared == tied
    if architecture.startswith("gemma3"):
        embed_scale = coded.model.embed_tokens.embed_scale
        assert embed_scale is not None and float(embed_scale) == 8.0

    ids = torch.tensor([[1, 5, 9, 14, 22, 31, 40, 8, 3], [1, 60, 7, 7, 12, 50, 4, 19, 33]])
    with torch.inference_mode():
        assert_bitwise(coded(input_ids=ids).logits, fp32(input_ids=ids).logits)
        greedy = {"do_sample": False, "max_new_tokens": 16, "min_new_tokens": 16}
        expected = fp32.generate(ids[:1], **greedy)
        got = coded.generate(ids[:1], **greedy)
    assert expected.shape == (1, ids.shape[1] + 16)
    assert got.tolist() == expected.tolist()


# ---------------------------------------------------------------- 4-bit codes two to a byte


def _four_bit_codes(seed: int, inputs: int = INPUTS) -> BlockCodes:
    """Q4_1-like codes: 0..15 in blocks of 32, with offsets."""
    full = random_codes(OUTPUTS, inputs, 32, offset=True, seed=seed)
    return BlockCodes(full.codes.remainder(16).to(torch.int8), full.scale, full.offset)


def _grouped_word(codes: Tensor, group_start: int, lane: int, nibbles: int) -> int:
    """Lane ``lane`` of the group at ``group_start``: its inputs ``lane + 16 j`` in nibble j."""
    return sum(int(codes[group_start + lane + 16 * j]) << (4 * j) for j in range(nibbles))


@pytest.mark.parametrize("inputs", [128, 192, 64, 576])
def test_packed_codes_are_the_grouped_layout_and_give_the_same_bits_everywhere(
    inputs: int,
) -> None:
    """Two codes a byte halve what a decode step reads; the layer must not change at all:
    the same weights bitwise, the same prefill and the same decode sums (same order). Rows
    of whole groups of 128 inputs, a group and a last group of 64, only 64, and SmolLM2's
    576 (four groups and a 64)."""
    codes = _four_bit_codes(seed=7, inputs=inputs)
    packed = pack_nibbles(codes)
    assert packed.codes.dtype == torch.uint8 and packed.codes.shape == (OUTPUTS, inputs // 2)
    assert packed.nibbles and packed.inputs == inputs and packed.block == 32
    assert fits_kernel(packed)
    # the kernel's layout: per group of 128 inputs 16 little-endian 32-bit words, word l
    # holding inputs l, l + 16, ... l + 112 in its nibbles 0..7; a last 64 in 16-bit words
    row, raw = codes.codes[3].to(torch.int64), packed.codes[3].numpy()
    grouped = inputs // 128 * 128
    words = raw[: grouped // 2].view("<u4").reshape(-1, 16) if grouped else None
    for group in range(inputs // 128):
        assert words is not None
        for lane in (0, 5, 15):
            assert int(words[group, lane]) == _grouped_word(row, 128 * group, lane, 8)
    if inputs > grouped:
        halves = raw[grouped // 2 :].view("<u2")
        for lane in (0, 9, 15):
            assert int(halves[lane]) == _grouped_word(row, grouped, lane, 4)
    assert torch.equal(torch.from_numpy(unpack_nibbles(packed.codes)), codes.codes.to(torch.uint8))
    assert_bitwise(packed.dequantize(), codes.dequantize())
    assert_bitwise(rebuild(packed), rebuild(codes))
    rows = torch.tensor([5, 0, 5, OUTPUTS - 1])
    assert_bitwise(packed.dequantize(rows), codes.dequantize(rows))
    plain, nibbles = BlockLinear(codes, bias=None), BlockLinear(packed, bias=None)
    assert nibbles.in_features == inputs
    torch.manual_seed(0)
    for shape in ((1, 1, inputs), (8, 1, inputs), (3, inputs), (2, 5, inputs), (9, inputs)):
        x = torch.randn(shape)
        assert_bitwise(nibbles(x), plain(x))


def test_only_4_bit_codes_in_blocks_of_32_pack() -> None:
    with pytest.raises(ValueError, match=r"codes 0\.\.15"):
        pack_nibbles(random_codes(OUTPUTS, INPUTS, 32, offset=True, seed=1))
    small = _four_bit_codes(seed=2)
    with pytest.raises(ValueError, match="blocks of 32"):
        pack_nibbles(BlockCodes(small.codes, torch.cat([small.scale] * 2, dim=1), None))
    odd = _four_bit_codes(seed=2, inputs=96)
    with pytest.raises(ValueError, match="multiple of 64 inputs, not 96"):
        pack_nibbles(odd)


# ---------------------------------------------------------------- stacked projections


def _projections(nibbles: bool, sizes: tuple[int, ...], seed: int) -> list[nn.Module]:
    layers: list[nn.Module] = []
    for index, size in enumerate(sizes):
        codes = random_codes(size, INPUTS, 32, offset=True, seed=seed + index)
        if nibbles:
            four_bit = codes.codes.remainder(16).to(torch.int8)
            codes = pack_nibbles(BlockCodes(four_bit, codes.scale, codes.offset))
        layers.append(BlockLinear(codes, bias=None))
    return layers


@pytest.mark.parametrize("nibbles", [False, True], ids=["bytes", "nibbles"])
def test_stacked_projections_give_each_layer_its_own_bits(nibbles: bool) -> None:
    """One kernel call for a layer's query/key/value (or gate/up) projections: each output
    is bitwise the layer's own call's, for any number of rows, and the layers keep no second
    copy of their codes; a prefill (several positions) is left to the layers themselves."""
    layers = _projections(nibbles, (40, 24, 24), seed=11)
    alone = [BlockLinear(m.block_codes, bias=None) for m in layers]  # type: ignore[operator]
    fused = fuse(layers)
    assert fused is not None
    for layer, size in zip(layers, (40, 24, 24), strict=True):
        codes = layer.codes  # type: ignore[union-attr]
        assert isinstance(codes, Tensor) and codes.shape[0] == size
        assert codes.untyped_storage().data_ptr() == fused.codes.untyped_storage().data_ptr()
    torch.manual_seed(2)
    for shape in ((1, 1, INPUTS), (8, 1, INPUTS), (3, INPUTS), (9, INPUTS)):
        x = torch.randn(shape)
        outputs = fused.outputs(x)
        assert outputs is not None and len(outputs) == 3
        for got, layer in zip(outputs, alone, strict=True):
            assert_bitwise(got.contiguous(), layer(x))
    assert fused.outputs(torch.randn(2, 5, INPUTS)) is None  # a prefill: the layers' BLAS
    assert fused.outputs(torch.randn(1, 1, INPUTS, dtype=torch.float64)) is None


def test_stacked_projections_step_aside_for_replaced_weights() -> None:
    """A layer given new buffers after stacking (assigned, moved) is no longer read from the
    stack: the caller then calls the layers and gets their new weights."""
    layers = _projections(False, (16, 16), seed=21)
    fused = fuse(layers)
    assert fused is not None and fused.outputs(torch.randn(1, INPUTS)) is not None
    replacement = random_codes(16, INPUTS, 32, offset=True, seed=99)
    layers[1].codes = replacement.codes  # type: ignore[union-attr]
    assert fused.outputs(torch.randn(1, INPUTS)) is None


def test_only_alike_bias_free_block_layers_stack() -> None:
    """Stacked rows must read alike: the same layout, block, inputs and offsets (or none)."""
    by_16 = BlockLinear(random_codes(16, INPUTS, 16, offset=True, seed=1), bias=None)
    by_32 = BlockLinear(random_codes(16, INPUTS, 32, offset=True, seed=2), bias=None)
    no_offset = BlockLinear(random_codes(16, INPUTS, 32, offset=False, seed=3), bias=None)
    with_bias = BlockLinear(random_codes(16, INPUTS, 32, offset=True, seed=4), torch.ones(16))
    plain = nn.Linear(INPUTS, 16, bias=False)
    for layers in ([by_16, by_32], [by_32, no_offset], [by_32, with_bias], [by_32, plain], []):
        assert fuse(layers) is None  # type: ignore[arg-type]
    nibbles = _projections(True, (16,), seed=5)[0]
    assert fuse([by_32, nibbles]) is None


def test_decode_bytes_counts_packed_codes_scales_and_offsets() -> None:
    """The benchmark's bandwidth bound divides by these bytes: packed codes must count."""
    packed = pack_nibbles(_four_bit_codes(seed=3))
    assert packed.offset is not None
    model = nn.Sequential(BlockLinear(packed, bias=None))
    expected = OUTPUTS * INPUTS // 2 + 2 * 4 * OUTPUTS * (INPUTS // 32)
    assert decode_bytes(model) == expected
