"""Read a GGUF's quantization codes for the weights of its fp32 copy, and prove them exact.

The embedded models' fp32 checkpoints are their GGUFs dequantized (``embedded.convert_gguf``,
by gguf-py through transformers). For the block types the embedded GGUFs use, gguf-py
computes each weight as ``fl(fl(scale * code) + offset)`` per block (no offset: ``fl(scale *
code)``), with, per type (ggml's block layouts):

| type | block | code | scale | offset |
|---|---:|---|---|---|
| Q8_0 | 32 | int8 | d | - |
| Q4_1 | 32 | 0..15 | d | m |
| Q5_0 | 32 | -16..15 | d | - |
| Q4_K | 32 | 0..15 | fl(d * sc) | -fl(dmin * m) |
| Q6_K | 16 | -32..31 | fl(d * sc) | - |

(d, m, dmin fp16; sc, m 6-bit or int8 per sub-block). ``extract_codes`` writes, for each
linear weight of the checkpoint, its codes (int8), scales and offsets (fp32), after checking
that rebuilding them gives the checkpoint's tensor **bitwise**, rows matched up (transformers
reorders the query/key rows of Llama-type GGUFs for its rotary layout). A tensor that fails
the check, or whose type is not above, stays fp32: exactness is proven per tensor, never
assumed. ``apply_codes`` puts the codes in a loaded model (``gapscope.models.block_linear``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file
from torch import nn

from gapscope.models.block_linear import (
    BlockCodes,
    BlockEmbedding,
    BlockLinear,
    fits_kernel,
    pack_nibbles,
    unpack_nibbles,
)

CODES_FILE = "gguf-codes.safetensors"
REPORT_FILE = "gguf-codes.json"
"""Beside the codes: which tensors were converted, which stayed fp32 and why."""

_LAYER_WEIGHT = re.compile(r"layers\.(\d+)\.(?:self_attn|mlp)\.(\w+)_proj\.weight$")
_GGUF_NAMES = {
    "q": "attn_q",
    "k": "attn_k",
    "v": "attn_v",
    "o": "attn_output",
    "gate": "ffn_gate",
    "up": "ffn_up",
    "down": "ffn_down",
}
Parsed = tuple[np.ndarray, np.ndarray, np.ndarray | None]
"""codes [blocks, block] int8, scale [blocks] fp32, offset [blocks] fp32 or None"""


def _halves(qs: np.ndarray, group: int) -> np.ndarray:
    """Nibbles of ``qs`` [n, bytes] in ggml's order: per ``group`` bytes, the low nibbles of
    the group's bytes, then their high nibbles."""
    n = qs.shape[0]
    split = qs.reshape(n, -1, 1, group) >> np.array([0, 4], dtype=np.uint8).reshape(1, 1, 2, 1)
    return (split & np.uint8(0x0F)).reshape(n, -1)


def _fp16(raw: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(raw).view(np.float16).astype(np.float32).reshape(-1)


def _q8_0(blocks: np.ndarray) -> Parsed:
    return np.ascontiguousarray(blocks[:, 2:]).view(np.int8), _fp16(blocks[:, :2]), None


def _q4_1(blocks: np.ndarray) -> Parsed:
    codes = _halves(blocks[:, 4:], 16).astype(np.int8)
    return codes, _fp16(blocks[:, :2]), _fp16(blocks[:, 2:4])


def _q5_0(blocks: np.ndarray) -> Parsed:
    high_bits = np.ascontiguousarray(blocks[:, 2:6]).view(np.uint32).reshape(-1, 1)
    high = ((high_bits >> np.arange(32, dtype=np.uint32)) & np.uint32(1)).astype(np.uint8)
    codes = (_halves(blocks[:, 6:], 16) | (high << np.uint8(4))).astype(np.int8) - np.int8(16)
    return codes, _fp16(blocks[:, :2]), None


def _q4_k_scales(packed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 8 sub-blocks' 6-bit scales and minimums, packed in 12 bytes (ggml's Q4_K)."""
    low, mins, mixed = (packed[:, i : i + 4] for i in (0, 4, 8))
    scales = np.concatenate([low & 0x3F, (mixed & 0x0F) | ((low >> 2) & 0x30)], axis=1)
    minimums = np.concatenate([mins & 0x3F, (mixed >> 4) | ((mins >> 2) & 0x30)], axis=1)
    return scales.astype(np.float32), minimums.astype(np.float32)


def _q4_k(blocks: np.ndarray) -> Parsed:
    d, dmin = _fp16(blocks[:, :2])[:, None], _fp16(blocks[:, 2:4])[:, None]
    sub_scales, minimums = _q4_k_scales(blocks[:, 4:16])
    codes = _halves(blocks[:, 16:], 32).astype(np.int8).reshape(-1, 32)
    return codes, (d * sub_scales).reshape(-1), -(dmin * minimums).reshape(-1)


def _q6_k(blocks: np.ndarray) -> Parsed:
    n = blocks.shape[0]
    low = _halves(blocks[:, :128], 64).reshape(n, 8, 32)
    high_bytes = blocks[:, 128:192].reshape(n, -1, 1, 32)
    high = (high_bytes >> np.array([0, 2, 4, 6], dtype=np.uint8).reshape(1, 1, 4, 1)) & 3
    codes = (low | (high.reshape(n, 8, 32) << np.uint8(4))).astype(np.int8) - np.int8(32)
    sub_scales = np.ascontiguousarray(blocks[:, 192:208]).view(np.int8).astype(np.float32)
    d = _fp16(blocks[:, 208:210])[:, None]
    return codes.reshape(-1, 16), (d * sub_scales).reshape(-1), None


_NIBBLE_TYPES = ("Q4_1", "Q4_K")
"""Their codes are 0..15 in blocks of 32: kept two to a byte (``pack_nibbles``)."""
_PARSERS: dict[str, tuple[int, Callable[[np.ndarray], Parsed]]] = {
    "Q8_0": (34, _q8_0),
    "Q4_1": (20, _q4_1),
    "Q5_0": (22, _q5_0),
    "Q4_K": (144, _q4_k),
    "Q6_K": (210, _q6_k),
}


def parse_blocks(type_name: str, data: np.ndarray, rows: int) -> BlockCodes:
    """A GGUF tensor's raw bytes (``rows`` rows) as codes, scales and offsets."""
    size, parse = _PARSERS[type_name]
    codes, scale, offset = parse(np.ascontiguousarray(data).reshape(-1, size))
    return BlockCodes(
        torch.from_numpy(np.ascontiguousarray(codes).reshape(rows, -1)),
        torch.from_numpy(np.ascontiguousarray(scale, dtype=np.float32).reshape(rows, -1)),
        None
        if offset is None
        else torch.from_numpy(np.ascontiguousarray(offset, dtype=np.float32).reshape(rows, -1)),
    )


def _code_values(codes: BlockCodes) -> np.ndarray:
    """One code a weight, ``[outputs, inputs]``, whatever the layout."""
    if codes.nibbles:
        return unpack_nibbles(codes.codes)
    return codes.codes.numpy()


def rebuild(codes: BlockCodes) -> torch.Tensor:
    """The weights as gguf-py computes them (numpy, one rounding per operation)."""
    values = _code_values(codes).astype(np.float32).reshape(codes.scale.shape[0], -1, codes.block)
    values = codes.scale.numpy()[:, :, None] * values
    if codes.offset is not None:
        values = values + codes.offset.numpy()[:, :, None]
    return torch.from_numpy(values.reshape(codes.scale.shape[0], codes.inputs))


def gguf_name(checkpoint_name: str, tied: bool) -> str | None:
    """The GGUF tensor holding a checkpoint weight, by llama.cpp's naming."""
    if checkpoint_name.endswith("embed_tokens.weight"):
        return "token_embd.weight"
    if checkpoint_name == "lm_head.weight":
        return "token_embd.weight" if tied else "output.weight"
    match = _LAYER_WEIGHT.search(checkpoint_name)
    if match and match.group(2) in _GGUF_NAMES:
        return f"blk.{match.group(1)}.{_GGUF_NAMES[match.group(2)]}.weight"
    return None


def _row_order(rebuilt: torch.Tensor, expected: torch.Tensor) -> torch.Tensor | None:
    """Indices ``order`` with ``rebuilt[order]`` bitwise ``expected``, or None."""
    if rebuilt.shape != expected.shape:
        return None
    rebuilt_bits, expected_bits = rebuilt.view(torch.int32), expected.view(torch.int32)
    if torch.equal(rebuilt_bits, expected_bits):
        return torch.arange(rebuilt.shape[0])
    where = {row.numpy().tobytes(): i for i, row in enumerate(rebuilt_bits)}
    order = [where.get(row.numpy().tobytes()) for row in expected_bits]
    if any(i is None for i in order):
        return None
    return torch.tensor(order)


def extract_codes(gguf_path: Path, checkpoint: Path) -> None:
    """Write ``CODES_FILE`` and ``REPORT_FILE`` into ``checkpoint`` for its GGUF source."""
    from gguf import GGUFReader

    reader = GGUFReader(gguf_path)
    tensors = {tensor.name: tensor for tensor in reader.tensors}
    tied = "output.weight" not in tensors
    saved: dict[str, torch.Tensor] = {}
    report: dict[str, Any] = {"gguf": gguf_path.name, "converted": {}, "kept_fp32": {}}
    with safe_open(str(checkpoint / "model.safetensors"), "pt") as weights:
        for name in weights.keys():  # noqa: SIM118 (safe_open has no __iter__)
            source = gguf_name(name, tied)
            if source is None:
                continue
            tensor = tensors.get(source)
            if tensor is None or tensor.tensor_type.name not in _PARSERS:
                kind = "missing" if tensor is None else tensor.tensor_type.name
                report["kept_fp32"][name] = f"{source}: {kind} (no exact codes for it)"
                continue
            expected = weights.get_tensor(name)
            codes = parse_blocks(tensor.tensor_type.name, tensor.data, int(expected.shape[0]))
            order = _row_order(rebuild(codes), expected)
            if order is None:
                report["kept_fp32"][name] = f"{source}: rebuilt weights differ from fp32's"
                continue
            codes = BlockCodes(
                codes.codes[order].contiguous(),
                codes.scale[order].contiguous(),
                None if codes.offset is None else codes.offset[order].contiguous(),
            )
            layout = "one code a byte"
            if tensor.tensor_type.name in _NIBBLE_TYPES:
                codes, layout = pack_nibbles(codes), "4-bit codes two a byte"
            saved[f"{name}:codes"], saved[f"{name}:scale"] = codes.codes, codes.scale
            if codes.offset is not None:
                saved[f"{name}:offset"] = codes.offset
            report["converted"][name] = (
                f"{source} {tensor.tensor_type.name}, bitwise equal, {layout}"
            )
    save_file(saved, str(checkpoint / CODES_FILE))
    (checkpoint / REPORT_FILE).write_text(json.dumps(report, indent=1, sort_keys=True))


def load_codes(checkpoint: Path) -> dict[str, BlockCodes]:
    """The codes ``extract_codes`` wrote for ``checkpoint``, by weight name ({} if none)."""
    path = checkpoint / CODES_FILE
    if not path.is_file():
        return {}
    flat = load_file(str(path))
    return {
        key.removesuffix(":codes"): BlockCodes(
            flat[key],
            flat[key.replace(":codes", ":scale")],
            flat.get(key.replace(":codes", ":offset")),
        )
        for key in flat
        if key.endswith(":codes")
    }


def apply_codes(model: nn.Module, codes: dict[str, BlockCodes]) -> int:
    """Replace the model's linear layers (and its input embedding) whose weights have codes
    by ``BlockLinear`` / ``BlockEmbedding``, in place; returns how many were replaced. A
    tied output head shares the embedding's codes."""
    replaced = 0
    for parent_name, parent in list(model.named_modules()):
        for child_name, child in list(parent.named_children()):
            qualified = f"{parent_name}.{child_name}" if parent_name else child_name
            weight: str | None = f"{qualified}.weight"
            if weight not in codes and child_name == "lm_head":
                weight = _tied_embedding_name(model, codes)
            found = codes.get(weight) if weight else None
            if found is None or not fits_kernel(found):
                continue
            if type(child) is nn.Linear:
                setattr(parent, child_name, BlockLinear(found, child.bias))
                replaced += 1
            elif isinstance(child, nn.Embedding):
                scale = getattr(child, "embed_scale", None)
                setattr(parent, child_name, BlockEmbedding(found, scale))
                replaced += 1
    return replaced


def _tied_embedding_name(model: nn.Module, codes: dict[str, BlockCodes]) -> str | None:
    config = getattr(model, "config", None)
    if not getattr(config, "tie_word_embeddings", False):
        return None
    return next((name for name in codes if name.endswith("embed_tokens.weight")), None)
