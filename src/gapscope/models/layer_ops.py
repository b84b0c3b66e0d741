"""A decoder layer's small elementwise steps in one kernel call each, bitwise transformers'.

Why: in a decode step the tensors between the matrix products hold a few hundred floats, so
each tensor op costs its dispatch (a few microseconds), not its arithmetic, and a layer has
dozens: transformers' ``apply_rotary_pos_emb`` (Llama, Gemma 3) is 14 ops for a query and a
key (two ``rotate_half``, each two slices, a negation and a concatenation; four products and
two sums), an RMS norm 6 to 8 (with no-op casts), on every layer (Gemma 3: 6 norms a layer).
``block_kernel.cpp`` computes the same products and sums, each rounded on its own as those
ops round them, so the bits are the same (``tests/models/test_layer_ops.py``):

* ``rotate``: the whole rotary embedding of one position a row;
* ``rms_norm``: a norm after its mean of squares, which stays torch's reduction (its
  summation order is torch's to choose, so it is not reproduced).

Each is taken only where that holds by construction (fp32 on the CPU, the layouts named) and
no gradient is wanted; anything else, or no kernel (``native_kernel``), goes to the stock
ops.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable

import torch
from torch import Tensor

from gapscope.models.native_kernel import KernelUnavailable, kernel

Rotation = Callable[[Tensor, Tensor, Tensor, Tensor], tuple[Tensor, Tensor]]


def library_for(tensors: tuple[Tensor, ...]) -> ctypes.CDLL | None:
    """The kernel, where every tensor is fp32 on the CPU, no gradient is wanted through them
    (the kernel's outputs have no backward; the engine decodes in inference mode) and it
    builds here."""
    grad = torch.is_grad_enabled()
    for tensor in tensors:  # a plain loop: this runs several times a layer a decode step
        if tensor.dtype is not torch.float32 or not tensor.is_cpu:
            return None
        if grad and tensor.requires_grad:
            return None
    try:
        return kernel()
    except KernelUnavailable:
        return None


def rotate(
    query: Tensor, key: Tensor, cos: Tensor, sin: Tensor, stock: Rotation
) -> tuple[Tensor, Tensor]:
    """``stock(query, key, cos, sin)`` (``apply_rotary_pos_emb``), in the kernel where it fits:
    query and key ``[batch, heads, 1, dim]``, cos and sin ``[batch, 1, dim]``."""
    library = library_for((query, key, cos, sin))
    table = (query.shape[0], 1, query.shape[-1]) if query.dim() == 4 else None
    if (
        library is None
        or not (_one_position(query, table) and _one_position(key, table))
        or not all(t.shape == table and t.is_contiguous() for t in (cos, sin))
    ):
        return stock(query, key, cos, sin)
    return _rotated(library, query, cos, sin), _rotated(library, key, cos, sin)


def _one_position(x: Tensor, table: tuple[int, int, int] | None) -> bool:
    """``x`` is ``[batch, heads, 1, dim]`` (dim even, contiguous) for tables ``[batch, 1,
    dim]``."""
    if table is None or x.dim() != 4 or x.shape[2] != 1 or x.stride(3) != 1 or x.shape[3] % 2:
        return False
    return (x.shape[0], 1, x.shape[3]) == table


def _rotated(library: ctypes.CDLL, x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    batch, heads, _, dim = x.shape
    out = torch.empty((batch, heads, 1, dim), dtype=torch.float32)
    library.gs_rotary(
        x.data_ptr(),
        batch,
        heads,
        dim,
        x.stride(0),
        x.stride(1),
        cos.data_ptr(),
        sin.data_ptr(),
        out.data_ptr(),
    )
    return out


def rms_norm(hidden: Tensor, weight: Tensor, eps: float, plus_one: bool) -> Tensor | None:
    """Llama's ``weight * (x * rsqrt(mean(x^2) + eps))`` or, ``plus_one``, Gemma 3's
    ``(x * rsqrt(mean(x^2) + eps)) * (1 + weight)`` over the last dimension of an fp32
    ``hidden``: contiguous, or one position a row of ``[batch, heads, 1, dim]`` (Gemma 3's
    query and key norms); None where that does not hold (then the stock ops)."""
    library = library_for((hidden, weight))
    layout = _row_layout(hidden)
    if library is None or layout is None or weight.dim() != 1 or not weight.is_contiguous():
        return None
    if hidden.shape[-1] != weight.shape[0]:
        return None
    variance = hidden.pow(2).mean(-1, keepdim=True).contiguous()
    out = torch.empty(hidden.shape, dtype=torch.float32)
    outer, inner, outer_stride, inner_stride = layout
    library.gs_rms_scale(
        hidden.data_ptr(),
        outer,
        inner,
        hidden.shape[-1],
        outer_stride,
        inner_stride,
        variance.data_ptr(),
        eps,
        weight.data_ptr(),
        plus_one,
        out.data_ptr(),
    )
    return out


def _row_layout(hidden: Tensor) -> tuple[int, int, int, int] | None:
    """``hidden``'s rows as the kernel reads them, ``(outer, inner, outer_stride,
    inner_stride)``: contiguous rows, or ``[batch, heads, 1, dim]`` views; None otherwise."""
    if hidden.dim() == 0 or hidden.numel() == 0:
        return None
    if hidden.is_contiguous():
        return hidden.numel() // hidden.shape[-1], 1, hidden.shape[-1], 0
    if hidden.dim() == 4 and hidden.shape[2] == 1 and hidden.stride(3) == 1:
        return hidden.shape[0], hidden.shape[1], hidden.stride(0), hidden.stride(1)
    return None
