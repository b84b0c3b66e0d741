"""A decode step's attention for all rows of a batch in one kernel call: the ``gguf`` format's.

Why: in a decode step each row's query meets that row's keys and values once, so attention
is a pass over the KV cache, bound by memory; torch's flash SDPA, called once a row a layer
(``row_attention``), took 2-4 times that: 32 of a SmolLM2 step's 80 ms at batch 8 on the
task prompts (one core of an AMD EPYC), and it barely used a second thread (27 ms), since a
row's call has only as many tasks as heads. ``gs_decode_attention`` (``block_kernel.cpp``)
reads each row's keys and values once for all query heads that share them and runs every
(row, kv head) of the batch as one task: 0.31 instead of 1.63 ms a layer for SmolLM2's 8 rows
of 250-1,150 columns, 0.74 instead of 2.60 ms for Gemma 3's (one thread, one run).

What changes: only the order of float sums (and an exp within 2 ulp), as between two BLAS
libraries, about 1e-6 on the attention outputs; what the ``gguf`` format's products already
differ by (``block_linear``). So it is that format's, and only in decode steps: a prefill
stays stock SDPA (the format's prefill logits stay bitwise fp32's), and the ``float32``
format, the reference, keeps SDPA throughout. A row's sums are taken in the same order
whatever its batch and the number of threads, so a reply still does not depend on its batch.
Whether the format stays faithful with it is measured, not argued:
``tests/models/test_faithful_default.py`` (slow) and the demo grid.
"""

from __future__ import annotations

import torch
from torch import Tensor

from gapscope.models.layer_ops import library_for

MAX_GROUP = 8
"""Most query heads a kv head the kernel takes (``MAX_GROUP`` in ``block_kernel.cpp``)."""
DIM_MULTIPLE = 16
"""A head's width must be a multiple of the kernel's widest vector (16 floats)."""


def takes_heads(heads: int, kv_heads: int, dim: int) -> bool:
    """Whether the kernel takes these heads: query heads a whole number of each kv head's, at
    most ``MAX_GROUP`` of them, a width a multiple of ``DIM_MULTIPLE``."""
    return not heads % kv_heads and heads // kv_heads <= MAX_GROUP and not dim % DIM_MULTIPLE


def decode_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    starts: list[int],
    groups: int,
    scaling: float | None,
) -> Tensor | None:
    """Attention of one query a row (``query`` ``[rows, heads, 1, dim]``, ``groups`` query
    heads a kv head) over each row's columns ``starts[row]`` to the end of ``key`` and
    ``value`` (``[rows, kv_heads, length, dim]``), all attended, scores scaled by ``scaling``
    (None: ``dim ** -0.5``), as ``[rows, 1, heads, dim]`` (what transformers' attention
    functions return); None where the kernel does not take the shapes or dtypes (then stock
    SDPA). Which of transformers' options it may run under is ``row_attention``'s to judge."""
    rows, heads, queries, dim = query.shape
    kv_heads, length = key.shape[1], key.shape[2]
    if (
        queries != 1
        or not takes_heads(heads, kv_heads, dim)
        or heads // kv_heads != groups
        or key.shape != value.shape
        or key.stride() != value.stride()
        or key.stride(3) != 1
        or not all(0 <= start < length for start in starts)
    ):
        return None
    library = library_for((query, key, value))
    if library is None:
        return None
    query = query.contiguous()
    first_columns = torch.tensor(starts, dtype=torch.int64)
    out = torch.empty((rows, 1, heads, dim), dtype=torch.float32)
    library.gs_decode_attention(
        query.data_ptr(),
        rows,
        heads,
        kv_heads,
        dim,
        key.data_ptr(),
        value.data_ptr(),
        key.stride(0),
        key.stride(1),
        key.stride(2),
        first_columns.data_ptr(),
        length,
        dim**-0.5 if scaling is None else scaling,
        out.data_ptr(),
    )
    return out
