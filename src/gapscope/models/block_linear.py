"""The ``gguf`` CPU format: a GGUF checkpoint's own quantization codes, evaluated exactly.

The embedded models' fp32 weights are a GGUF's blocks dequantized: every weight is
``fl(fl(scale * code) + offset)``, one scale and offset per block of 16 or 32 inputs
(``gapscope.models.gguf_codes`` reads them and checks that claim bitwise). Holding the codes
(1 byte a weight, half a byte for 4-bit types) and the blocks' scales and offsets instead of
fp32 values (4 bytes) keeps the same weights in a fifth to a third of the memory, and a
batch-1 decode step, which reads every weight once, reads that much less:

* a decode step (one position per row) multiplies in the compiled kernel
  (``block_kernel.cpp``), which rebuilds each weight exactly, in registers, and sums in fp32:
  only the order of the float sums differs from fp32's BLAS, as between two BLAS libraries,
  and a row's sums do not depend on the other rows of its batch;
* a prefill (several positions) dequantizes the layer's fp32 weights, bitwise the
  checkpoint's, and multiplies with the BLAS exactly as the fp32 model does.

Activations, the residual stream (where steering adds its vectors), norms and attention stay
fp32. Its greedy output against fp32's is measured like every format's
(``gapscope.models.calibration``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from gapscope.models.native_kernel import kernel


@dataclass(frozen=True)
class BlockCodes:
    """A weight matrix ``[outputs, inputs]`` as codes, per-block scales and offsets."""

    codes: Tensor
    """int8 ``[outputs, inputs]``, one code a byte; or uint8 ``[outputs, inputs / 2]``, 4-bit
    codes two a byte in the kernel's grouped layout (``pack_nibbles``)"""
    scale: Tensor
    """fp32 ``[outputs, inputs / block]``"""
    offset: Tensor | None
    """fp32 like ``scale``, or None where every offset is zero"""

    @property
    def nibbles(self) -> bool:
        return self.codes.dtype == torch.uint8

    @property
    def inputs(self) -> int:
        return int(self.codes.shape[1]) * (2 if self.nibbles else 1)

    @property
    def block(self) -> int:
        return self.inputs // int(self.scale.shape[1])

    def dequantize(self, rows: Tensor | None = None) -> Tensor:
        """The fp32 weights (of ``rows`` only, when given), bitwise the checkpoint's."""
        codes, inputs = self.codes, self.inputs
        count = int(codes.shape[0]) if rows is None else int(rows.numel())
        index = None if rows is None else rows.reshape(-1).to(torch.int64).contiguous()
        out = torch.empty(count, inputs, dtype=torch.float32)
        kernel().gs_dequantize(
            codes.data_ptr(),
            self.nibbles,
            self.scale.data_ptr(),
            None if self.offset is None else self.offset.data_ptr(),
            inputs,
            self.block,
            None if index is None else index.data_ptr(),
            count,
            out.data_ptr(),
        )
        return out


def _product(
    rows: Tensor, codes: Tensor, nibbles: bool, scale: Tensor, offset: Tensor | None, block: int
) -> Tensor:
    """``rows @ weights.T`` for a few fp32 rows ``[m, inputs]``, in the kernel, the weights
    given by their parts: a decode step calls it for every linear layer, so it builds nothing
    it need not (no ``BlockCodes``, no properties: about 7 us a call less)."""
    rows = rows.contiguous()
    outputs = codes.shape[0]
    out = torch.empty(rows.shape[0], outputs, dtype=torch.float32)
    kernel().gs_block_matmul(
        rows.data_ptr(),
        rows.shape[0],
        rows.shape[1],
        codes.data_ptr(),
        nibbles,
        scale.data_ptr(),
        None if offset is None else offset.data_ptr(),
        block,
        out.data_ptr(),
        outputs,
    )
    return out


NIBBLE_GROUP = 128
"""Inputs a group of packed 4-bit codes covers (``pack_nibbles``; ``block_kernel.cpp``)."""


def pack_nibbles(codes: BlockCodes) -> BlockCodes:
    """The same weights with 4-bit codes two a byte (half the bytes a decode step reads), in
    the kernel's grouped layout: a row's inputs in groups of 128 (then one of 64 where 64
    remain), lane ``l`` of a group (a little-endian 32-bit word, 16-bit in a group of 64)
    holding the codes of the group's inputs ``l, l + 16, l + 32, ...`` in successive nibbles,
    so that the kernel reads 128 codes a load and shifts instead of widening
    (``block_kernel.cpp`` says why). Only for blocks of 32 whose codes are all 0..15 (Q4_1,
    Q4_K) and rows of a multiple of 64 inputs."""
    values = codes.codes
    if codes.nibbles or codes.block != 32 or values.min() < 0 or values.max() > 15:
        raise ValueError("only blocks of 32 with codes 0..15 pack two to a byte")
    inputs = int(values.shape[1])
    if inputs % 64:
        raise ValueError(f"4-bit codes pack in rows of a multiple of 64 inputs, not {inputs}")
    parts = [
        _grouped_words(values[:, start:end].numpy(), group, word)
        for start, end, group, word in _nibble_groups(inputs)
    ]
    packed = np.concatenate(parts, axis=1)
    return BlockCodes(torch.from_numpy(packed), codes.scale, codes.offset)


def _nibble_groups(inputs: int) -> list[tuple[int, int, int, np.dtype]]:
    """The grouped layout's parts of a row: (first input, end, inputs a group, word type):
    groups of 128 in 32-bit words, then a last 64 in 16-bit ones (each absent if empty)."""
    grouped = inputs // NIBBLE_GROUP * NIBBLE_GROUP
    parts: list[tuple[int, int, int, np.dtype]] = [
        (0, grouped, NIBBLE_GROUP, np.dtype("<u4")),
        (grouped, inputs, inputs - grouped, np.dtype("<u2")),
    ]
    return [part for part in parts if part[1] > part[0]]


def _nibble_shifts(group: int, word: np.dtype) -> np.ndarray:
    """Where input ``l + 16 j`` of a group sits in word ``l``: nibble ``j``, shift ``4 j``."""
    return (4 * np.arange(group // 16, dtype=word)).reshape(1, 1, -1, 1)


def _grouped_words(values: np.ndarray, group: int, word: np.dtype) -> np.ndarray:
    """``values`` [outputs, groups x group] as bytes [outputs, groups x group / 2]: per group
    16 words, word ``l`` holding inputs ``l + 16 j`` in nibble ``j``."""
    outputs = values.shape[0]
    nibbles = values.astype(word).reshape(outputs, -1, group // 16, 16)
    words = np.bitwise_or.reduce(nibbles << _nibble_shifts(group, word), axis=2).astype(word)
    return np.ascontiguousarray(words).view(np.uint8).reshape(outputs, -1)


def unpack_nibbles(packed: Tensor) -> np.ndarray:
    """The codes ``pack_nibbles`` packed, one a byte ``[outputs, inputs]`` (uint8)."""
    raw = packed.numpy()
    outputs = raw.shape[0]
    values = []
    for start, end, group, word in _nibble_groups(raw.shape[1] * 2):
        words = np.ascontiguousarray(raw[:, start // 2 : end // 2]).view(word)
        nibbles = (words.reshape(outputs, -1, 1, 16) >> _nibble_shifts(group, word)) & 0x0F
        values.append(nibbles.astype(np.uint8).reshape(outputs, -1))
    return np.concatenate(values, axis=1)


def fits_kernel(codes: BlockCodes) -> bool:
    """The kernel's shapes: one code a byte in blocks of 16 or 32, or 4-bit codes in blocks of
    32; inputs a multiple of 64; contiguous CPU tensors."""
    return (
        codes.codes.dtype in (torch.int8, torch.uint8)
        and codes.block in ((32,) if codes.nibbles else (16, 32))
        and codes.inputs % 64 == 0
        and all(
            t is None or (t.is_contiguous() and t.device.type == "cpu")
            for t in (codes.codes, codes.scale, codes.offset)
        )
    )


class _HoldsCodes(nn.Module):
    """A module whose weight matrix is held as block codes, in buffers (saved, moved and
    counted like the module's other tensors)."""

    codes: Tensor
    scale: Tensor
    offset: Tensor | None

    def __init__(self, codes: BlockCodes) -> None:
        super().__init__()
        self.register_buffer("codes", codes.codes)
        self.register_buffer("scale", codes.scale)
        self.register_buffer("offset", codes.offset)

    @property
    def block_codes(self) -> BlockCodes:
        return BlockCodes(self.codes, self.scale, self.offset)


class BlockLinear(_HoldsCodes):
    """An ``nn.Linear`` whose weight is held as GGUF block codes (module docstring)."""

    def __init__(self, codes: BlockCodes, bias: Tensor | None) -> None:
        super().__init__(codes)
        self.bias = None if bias is None else nn.Parameter(bias.detach().clone())
        self.out_features, self.in_features = int(codes.codes.shape[0]), codes.inputs
        self._nibbles, self._block = codes.nibbles, codes.block

    @property
    def weight(self) -> Tensor:
        """The fp32 weight (rebuilt on each access: for inspection, not for the forward)."""
        return self.block_codes.dequantize()

    def forward(self, x: Tensor) -> Tensor:
        if x.dtype != torch.float32:
            raise TypeError(f"the gguf format computes in fp32, got {x.dtype} activations")
        # One position per row (a decode step, or a row's 1-token suffix): the kernel. Any
        # other shape: the checkpoint's fp32 weights through the BLAS. The choice follows
        # a row's own length, never its batch, so a row is computed alike batched or alone.
        if _one_position(x):
            rows = x.reshape(-1, self.in_features)
            out = _product(rows, self.codes, self._nibbles, self.scale, self.offset, self._block)
            out = out.reshape(*x.shape[:-1], self.out_features)
        else:
            out = F.linear(x, self.block_codes.dequantize())
        return out if self.bias is None else out + self.bias


class KernelWeights(NamedTuple):
    """A weight matrix's parts as ``gs_block_matmul`` takes them."""

    codes: Tensor
    nibbles: bool
    scale: Tensor
    offset: Tensor | None
    block: int


def kernel_weights(layer: nn.Module) -> KernelWeights | None:
    """``layer``'s parts for the kernel where it is a bias-free ``BlockLinear`` (read off
    ``_buffers``: ``nn.Module.__getattr__`` costs more, and this runs on every decode step)."""
    if type(layer) is not BlockLinear or layer.bias is not None:
        return None
    buffers = layer._buffers
    codes, scale, offset = buffers["codes"], buffers["scale"], buffers["offset"]
    assert codes is not None and scale is not None
    return KernelWeights(codes, layer._nibbles, scale, offset, layer._block)


def _one_position(x: Tensor) -> bool:
    """Whether ``BlockLinear`` multiplies ``x`` in the kernel: one position a row (a decode
    step, or a row's 1-token suffix)."""
    return x.dim() >= 2 and (x.dim() < 3 or x.shape[-2] == 1)


@dataclass(frozen=True)
class FusedProducts:
    """``BlockLinear`` layers that read the same input (a decoder layer's query, key and value
    projections, or its gate and up ones), their codes stacked row on row, so that a decode
    step multiplies them in one kernel call: each output row's sum is computed alone, in the
    same order, so the outputs are bitwise the separate calls' (in a SmolLM2 step 90 of 210
    calls fewer, each with its Python, ctypes and OpenMP start). The layers' own buffers become
    views of the stacked ones (``fuse``): no second copy of the weights."""

    layers: tuple[BlockLinear, ...]
    codes: Tensor
    scale: Tensor
    offset: Tensor | None
    sizes: tuple[int, ...]
    views: tuple[tuple[Tensor | None, ...], ...]
    """each layer's codes, scale and offset buffers as ``fuse`` set them"""

    def outputs(self, x: Tensor) -> list[Tensor] | None:
        """Each layer's output for ``x`` where the layers would each use the kernel (fp32,
        one position a row) and still hold the stacked codes; else None: call them."""
        if x.dtype != torch.float32 or not _one_position(x) or not self._still_stacked():
            return None
        first = self.layers[0]
        rows = x.reshape(-1, first.in_features)
        out = _product(rows, self.codes, first._nibbles, self.scale, self.offset, first._block)
        return list(out.reshape(*x.shape[:-1], -1).split_with_sizes(list(self.sizes), dim=-1))

    def kernel_weights(self) -> KernelWeights | None:
        """What the kernel reads for the stacked layers, where they still hold the stacked
        codes (else None: call them)."""
        if not self._still_stacked():
            return None
        first = self.layers[0]
        return KernelWeights(self.codes, first._nibbles, self.scale, self.offset, first._block)

    def _still_stacked(self) -> bool:
        """A layer given other buffers since (assigned, moved, loaded by replacement) is not
        read here any more (read off ``_buffers``: ``nn.Module.__getattr__`` costs more)."""
        return all(
            layer._buffers["codes"] is codes
            and layer._buffers["scale"] is scale
            and layer._buffers["offset"] is offset
            for layer, (codes, scale, offset) in zip(self.layers, self.views, strict=True)
        )


def fuse(layers: list[nn.Module]) -> FusedProducts | None:
    """The layers stacked for one kernel call, or None where they differ in what the kernel
    reads (layout, block, inputs, offsets) or are not bias-free ``BlockLinear`` layers."""
    if not layers or not all(type(m) is BlockLinear and m.bias is None for m in layers):
        return None
    blocks: list[BlockLinear] = [m for m in layers if isinstance(m, BlockLinear)]
    first = blocks[0]
    if any(
        (m._nibbles, m._block, m.in_features, m.offset is None)
        != (first._nibbles, first._block, first.in_features, first.offset is None)
        for m in blocks
    ):
        return None
    codes = torch.cat([m.codes for m in blocks])
    scale = torch.cat([m.scale for m in blocks])
    offset = None if first.offset is None else torch.cat([m.offset for m in blocks])  # type: ignore[misc]
    sizes = tuple(m.out_features for m in blocks)
    views = tuple(
        zip(
            codes.split_with_sizes(list(sizes)),
            scale.split_with_sizes(list(sizes)),
            offset.split_with_sizes(list(sizes)) if offset is not None else [None] * len(blocks),
            strict=True,
        )
    )
    for m, (piece, piece_scale, piece_offset) in zip(blocks, views, strict=True):
        m.codes, m.scale, m.offset = piece, piece_scale, piece_offset
    return FusedProducts(tuple(blocks), codes, scale, offset, sizes, views)


class BlockEmbedding(_HoldsCodes):
    """An input embedding table held as GGUF block codes: looks rows up and rebuilds them
    exactly. ``scale`` is the factor some models multiply embeddings by (Gemma 3's
    ``embed_scale``), applied as the model's own module does."""

    embed_scale: Tensor | None

    def __init__(self, codes: BlockCodes, scale: Tensor | None = None) -> None:
        super().__init__(codes)
        self.register_buffer("embed_scale", scale)
        self.num_embeddings, self.embedding_dim = int(codes.codes.shape[0]), codes.inputs

    @property
    def weight(self) -> Tensor:
        """The whole fp32 table (rebuilt on each access; ``direction.ModelIdentity`` hashes
        it, and it is bitwise the fp32 checkpoint's, so directions carry over)."""
        return self.block_codes.dequantize()

    def forward(self, input_ids: Tensor) -> Tensor:
        rows = self.block_codes.dequantize(input_ids)
        rows = rows.reshape(*input_ids.shape, self.embedding_dim)
        if self.embed_scale is not None:
            rows = rows * self.embed_scale.to(rows.dtype)
        return rows
