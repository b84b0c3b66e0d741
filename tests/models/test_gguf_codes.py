"""Reading a GGUF's quantization codes (``gguf_codes``), checked against gguf-py.

The ``gguf`` CPU format is worth having only if its weights are bitwise the fp32 checkpoint's,
and the fp32 checkpoints are their GGUFs dequantized by gguf-py. So the parsers are held to
gguf-py's own ``dequantize`` on random blocks (every bit pattern of the codes, finite fp16
scales of every magnitude, subnormals included), bit for bit; ``extract_codes`` keeps only
tensors it proved equal, recovering rows that the checkpoint stores in another order, and says
why it kept the others in fp32.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from gguf import GGML_QUANT_SIZES, GGMLQuantizationType, GGUFWriter
from gguf.quants import dequantize
from safetensors.torch import save_file

from gapscope.models.block_linear import BlockCodes, fits_kernel
from gapscope.models.gguf_codes import (
    CODES_FILE,
    REPORT_FILE,
    extract_codes,
    gguf_name,
    load_codes,
    parse_blocks,
    rebuild,
)

INPUTS = 256
"""A row length every tested type's blocks divide (the K-quants' super-blocks are 256)."""

# type: (block, fp16 fields' byte offsets in a block, code range, has offset)
LAYOUTS: dict[str, tuple[int, tuple[int, ...], tuple[int, int], bool]] = {
    "Q8_0": (32, (0,), (-128, 127), False),
    "Q4_1": (32, (0, 2), (0, 15), True),
    "Q5_0": (32, (0,), (-16, 15), False),
    "Q4_K": (32, (0, 2), (0, 15), True),
    "Q6_K": (16, (208,), (-32, 31), False),
}


def _finite_fp16(rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` random fp16 bit patterns of finite numbers (either sign, any exponent)."""
    bits = rng.integers(0, 1 << 16, size=count, dtype=np.uint16)
    infinite_or_nan = (bits & 0x7C00) == 0x7C00
    bits[infinite_or_nan] &= np.uint16(0xBFFF)  # exponent 31 -> 15
    return bits


def _raw_blocks(type_name: str, rows: int, seed: int, inputs: int = INPUTS) -> np.ndarray:
    """Random bytes of a ``type_name`` tensor ``[rows, inputs]``, finite fp16 in its fp16
    fields; shaped ``[rows, bytes per row]`` as a GGUF stores it."""
    rng = np.random.default_rng(seed)
    block, size = GGML_QUANT_SIZES[GGMLQuantizationType[type_name]]
    raw = rng.integers(0, 256, size=(rows * inputs // block, size), dtype=np.uint8)
    for at in LAYOUTS[type_name][1]:
        raw[:, at : at + 2] = _finite_fp16(rng, raw.shape[0]).view(np.uint8).reshape(-1, 2)
    return raw.reshape(rows, -1)


def _bits(values: np.ndarray | torch.Tensor) -> np.ndarray:
    array = values.numpy() if isinstance(values, torch.Tensor) else values
    return np.ascontiguousarray(array, dtype=np.float32).view(np.int32)


@pytest.mark.parametrize("type_name", sorted(LAYOUTS))
def test_codes_rebuild_gguf_pys_weights_bitwise(type_name: str) -> None:
    rows = 5
    raw = _raw_blocks(type_name, rows, seed=len(type_name) + ord(type_name[1]))
    reference = dequantize(raw, GGMLQuantizationType[type_name])
    assert reference.shape == (rows, INPUTS)

    codes = parse_blocks(type_name, raw, rows)

    block, _, (low, high), has_offset = LAYOUTS[type_name]
    assert codes.codes.dtype == torch.int8 and codes.codes.shape == (rows, INPUTS)
    assert codes.block == block and fits_kernel(codes)
    assert (codes.offset is not None) == has_offset
    assert int(codes.codes.min()) >= low and int(codes.codes.max()) <= high
    # random bytes reach (nearly) the whole code range: the parser reads every bit
    assert int(codes.codes.min()) <= low + 1 and int(codes.codes.max()) >= high - 1
    np.testing.assert_array_equal(_bits(rebuild(codes)), _bits(reference))
    # the compiled kernel's weights too (what BlockLinear and BlockEmbedding compute with)
    np.testing.assert_array_equal(_bits(codes.dequantize()), _bits(reference))
    picked = torch.tensor([3, 0, 3])
    np.testing.assert_array_equal(_bits(codes.dequantize(picked)), _bits(reference[[3, 0, 3]]))


def test_gguf_names_follow_llama_cpp() -> None:
    layer = "model.layers.7"
    expected = {
        f"{layer}.self_attn.q_proj.weight": "blk.7.attn_q.weight",
        f"{layer}.self_attn.k_proj.weight": "blk.7.attn_k.weight",
        f"{layer}.self_attn.v_proj.weight": "blk.7.attn_v.weight",
        f"{layer}.self_attn.o_proj.weight": "blk.7.attn_output.weight",
        f"{layer}.mlp.gate_proj.weight": "blk.7.ffn_gate.weight",
        f"{layer}.mlp.up_proj.weight": "blk.7.ffn_up.weight",
        f"{layer}.mlp.down_proj.weight": "blk.7.ffn_down.weight",
        "model.embed_tokens.weight": "token_embd.weight",
    }
    for tied in (False, True):
        for name, source in expected.items():
            assert gguf_name(name, tied) == source
    assert gguf_name("lm_head.weight", tied=False) == "output.weight"
    assert gguf_name("lm_head.weight", tied=True) == "token_embd.weight"
    for norm in (
        f"{layer}.input_layernorm.weight",
        f"{layer}.post_attention_layernorm.weight",
        f"{layer}.self_attn.q_norm.weight",
        "model.norm.weight",
    ):
        assert gguf_name(norm, tied=False) is None


def _write_gguf(path: Path, tensors: dict[str, tuple[str, np.ndarray]]) -> None:
    """A GGUF holding ``tensors`` (name -> (type, raw bytes or F16/F32 values))."""
    writer = GGUFWriter(path, "llama")
    for name, (type_name, data) in tensors.items():
        if type_name in ("F16", "F32"):
            writer.add_tensor(name, data)
        else:
            writer.add_tensor(name, data, raw_dtype=GGMLQuantizationType[type_name])
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def _one_ulp_up(values: np.ndarray, row: int, column: int) -> np.ndarray:
    changed = values.copy()
    changed.view(np.int32)[row, column] += 1
    return changed


def test_extract_keeps_exactly_the_tensors_it_proves_equal(tmp_path: Path) -> None:
    layer = "model.layers.0"
    raw = {
        "token_embd.weight": ("Q8_0", _raw_blocks("Q8_0", 6, seed=1)),
        "blk.0.attn_q.weight": ("Q4_K", _raw_blocks("Q4_K", 8, seed=2)),
        "blk.0.attn_k.weight": ("Q5_0", _raw_blocks("Q5_0", 4, seed=3)),
        "blk.0.ffn_up.weight": ("Q4_1", _raw_blocks("Q4_1", 8, seed=4)),
        "blk.0.ffn_down.weight": ("Q6_K", _raw_blocks("Q6_K", 6, seed=5)),
        "output.weight": ("Q8_0", _raw_blocks("Q8_0", 6, seed=6)),
    }
    weights = {name: dequantize(data, GGMLQuantizationType[t]) for name, (t, data) in raw.items()}
    values_v = np.random.default_rng(7).standard_normal((4, INPUTS)).astype(np.float16)
    norm = np.ones(INPUTS, dtype=np.float32)
    gguf_path = tmp_path / "model.gguf"
    _write_gguf(
        gguf_path,
        {
            **raw,
            "blk.0.attn_v.weight": ("F16", values_v),
            "blk.0.attn_norm.weight": ("F32", norm),
        },
    )
    permutation = np.roll(np.arange(8), 3)  # the checkpoint's q rows in another order
    checkpoint = {
        "model.embed_tokens.weight": weights["token_embd.weight"],
        f"{layer}.self_attn.q_proj.weight": weights["blk.0.attn_q.weight"][permutation],
        f"{layer}.self_attn.k_proj.weight": _one_ulp_up(weights["blk.0.attn_k.weight"], 2, 9),
        f"{layer}.self_attn.v_proj.weight": values_v.astype(np.float32),
        f"{layer}.self_attn.o_proj.weight": np.zeros((INPUTS, 4), dtype=np.float32),
        f"{layer}.mlp.up_proj.weight": weights["blk.0.ffn_up.weight"],
        f"{layer}.mlp.down_proj.weight": weights["blk.0.ffn_down.weight"],
        f"{layer}.input_layernorm.weight": norm,
        "lm_head.weight": weights["output.weight"],
    }
    save_file(
        {name: torch.from_numpy(np.ascontiguousarray(v)) for name, v in checkpoint.items()},
        str(tmp_path / "model.safetensors"),
    )

    extract_codes(gguf_path, tmp_path)

    report = json.loads((tmp_path / REPORT_FILE).read_text())
    converted = {
        "model.embed_tokens.weight",
        f"{layer}.self_attn.q_proj.weight",
        f"{layer}.mlp.up_proj.weight",
        f"{layer}.mlp.down_proj.weight",
        "lm_head.weight",
    }
    assert report["gguf"] == "model.gguf"
    assert set(report["converted"]) == converted
    kept = report["kept_fp32"]
    assert set(kept) == {f"{layer}.self_attn.{p}_proj.weight" for p in "kvo"}
    assert "differ" in kept[f"{layer}.self_attn.k_proj.weight"]
    assert "F16" in kept[f"{layer}.self_attn.v_proj.weight"]
    assert "missing" in kept[f"{layer}.self_attn.o_proj.weight"]

    codes = load_codes(tmp_path)
    assert set(codes) == converted
    for name in converted:
        np.testing.assert_array_equal(_bits(rebuild(codes[name])), _bits(checkpoint[name]))
    assert codes[f"{layer}.mlp.up_proj.weight"].offset is not None  # Q4_1's minimums
    assert codes[f"{layer}.mlp.down_proj.weight"].block == 16  # Q6_K's sub-blocks
    # 4-bit types are kept two codes a byte, the others one a byte
    packed = {name for name in converted if codes[name].nibbles}
    assert packed == {f"{layer}.self_attn.q_proj.weight", f"{layer}.mlp.up_proj.weight"}
    assert all("two a byte" in report["converted"][name] for name in packed)


def test_a_tied_head_reads_the_embeddings_codes(tmp_path: Path) -> None:
    raw = _raw_blocks("Q6_K", 4, seed=11)
    embedding = dequantize(raw, GGMLQuantizationType.Q6_K)
    _write_gguf(tmp_path / "tied.gguf", {"token_embd.weight": ("Q6_K", raw)})
    save_file(
        {
            "model.embed_tokens.weight": torch.from_numpy(embedding),
            "lm_head.weight": torch.from_numpy(embedding.copy()),
        },
        str(tmp_path / "model.safetensors"),
    )

    extract_codes(tmp_path / "tied.gguf", tmp_path)

    codes = load_codes(tmp_path)
    assert set(codes) == {"model.embed_tokens.weight", "lm_head.weight"}
    for found in codes.values():
        np.testing.assert_array_equal(_bits(rebuild(found)), _bits(embedding))


def test_no_codes_file_loads_no_codes(tmp_path: Path) -> None:
    assert not (tmp_path / CODES_FILE).exists()
    assert load_codes(tmp_path) == {}


def test_load_codes_reads_the_layout_it_writes(tmp_path: Path) -> None:
    """``<weight>:codes``, ``:scale`` and (only where nonzero) ``:offset`` per weight."""
    codes = torch.arange(-64, 64, dtype=torch.int8).reshape(2, 64)
    scale, offset = torch.rand(2, 2), torch.rand(2, 2)
    save_file(
        {"a.weight:codes": codes, "a.weight:scale": scale, "a.weight:offset": offset}
        | {"b.weight:codes": codes.clone(), "b.weight:scale": scale.clone()},
        str(tmp_path / CODES_FILE),
    )
    loaded = load_codes(tmp_path)
    assert set(loaded) == {"a.weight", "b.weight"}
    a, b = loaded["a.weight"], loaded["b.weight"]
    assert isinstance(a, BlockCodes) and a.block == 32
    assert torch.equal(a.codes, codes) and torch.equal(a.scale, scale)
    assert a.offset is not None and torch.equal(a.offset, offset)
    assert b.offset is None
