"""Attention that computes each row of a padded batch over that row's own tokens, as alone.

Why: the engine batches independent requests left-padded to one width. Stock SDPA then
reduces every row's softmax and value sum over the padded width; the masked columns add
exact zeros, but the reduction's blocks fall differently, so a padded row's logits move by
~3e-5 (measured on SmolLM2, a 207-token prompt beside a 906-token one) and greedy decoding
flips: 8 of 16 of the diagnostics' prompts gave a different 32-token continuation batched
than alone, while HF ``generate`` on the same prompt repeated 4 times (no padding) matched
its single-row run 16 of 16. Which requests share a batch depends on timing, so without
this a run's replies depended on its scheduling.

Here each row's keys are cut to the columns any of its queries attends (the engine keeps a
row's tokens contiguous, see ``gapscope.models.engine``) and its queries to those attending
any column, and stock SDPA runs on that slice with the slice of the model's own mask:
dropped where it says nothing beyond causality, exactly as the stock path drops it for an
unpadded sequence (so the kernel and its reduction order are the ones a lone request gets),
kept otherwise (sliding windows, a reused prefix). Padded query positions are left zero; no
real token attends to them.

The keys and values go in as views of the batch's cache, not copies: SDPA reads them alike
(bitwise on SmolLM2's logits for 4 task prompts over 8 steps), and a decode step of 8 rows at
2,300 columns spent 7.8 ms a layer in attention instead of 10.8 with the copies.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor
from transformers import AttentionInterface
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

from gapscope.models.decode_attention import decode_attention

ROW_ATTENTION = "gapscope_rows"
"""The name the engine's models run their attention under (registered below)."""
KERNEL_ROW_ATTENTION = "gapscope_rows_kernel"
"""The same, with decode steps in the kernel: the ``gguf`` format's (``decode_attention``)."""


def _row_mask(mask: Tensor) -> Tensor | None:
    """``mask`` (1, 1, q, k; True attends) or None where it adds nothing to what the stock
    path assumes without one: every column (a decode step) or causality over q == k."""
    queries, keys = mask.shape[-2:]
    if bool(mask.all()):
        return None
    if queries == keys:
        causal = torch.ones(queries, keys, dtype=torch.bool, device=mask.device).tril()
        if torch.equal(mask[0, 0], causal):
            return None
    return mask


@dataclass(frozen=True)
class _RowSlice:
    """Where a row's real queries and columns start, and the mask SDPA gets for them."""

    first_query: int
    start: int
    mask: Tensor | None


def _row_slices(attention_mask: Tensor) -> list[_RowSlice]:
    """Each row's slice of a padded batch's boolean mask (module docstring)."""
    slices = []
    for row in range(attention_mask.shape[0]):
        allowed = attention_mask[row, 0]
        attending = allowed.any(dim=1)  # the row's real queries
        attended = allowed.any(dim=0)  # its real columns (a window's too)
        first_query = int(attending.to(torch.int8).argmax())
        start = int(attended.to(torch.int8).argmax())
        if not (bool(attending[first_query:].all()) and bool(attended[start:].all())):
            first_query, start = 0, 0  # not one contiguous block: the stock masked path
        cut = attention_mask[row : row + 1, :, first_query:, start:].contiguous()
        slices.append(_RowSlice(first_query, start, _row_mask(cut)))
    return slices


class _LastMask:
    """The slices of the last masks seen. A model passes one mask object to all its layers in
    a forward pass (two, alternating, where some layers slide a window), so a batch's rows are
    read once a pass, not once a layer: on SmolLM2 decoding 8 rows that took 13 of a step's
    106 ms. Masks are made afresh for every pass (``sdpa_mask``, registered below) and never
    written after; an entry holds its mask weakly and matches it by identity, so a mask that
    is gone can never be mistaken for a new one at its address."""

    def __init__(self) -> None:
        self._seen: list[tuple[weakref.ref[Tensor], list[_RowSlice]]] = []
        self._lock = threading.Lock()

    def slices(self, mask: Tensor) -> list[_RowSlice]:
        with self._lock:
            for ref, slices in self._seen:
                if ref() is mask:
                    return slices
        slices = _row_slices(mask)
        with self._lock:
            self._seen = [*self._seen[-1:], (weakref.ref(mask), slices)]
        return slices


_LAST_MASKS = _LastMask()


def beyond_sdpa(kwargs: dict[str, Any]) -> bool:
    """Whether transformers asks an attention call for more than SDPA's own arguments (a
    softcap, the attention weights back, a position bias): then only its own function will
    do (which refuses a softcap)."""
    return (
        kwargs.get("softcap") is not None
        or bool(kwargs.get("output_attentions"))
        or kwargs.get("position_bias") is not None
    )


def _attend(
    module: torch.nn.Module,
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attention_mask: Tensor | None,
    **kwargs: Any,
) -> tuple[Tensor, None]:
    """``sdpa_attention_forward``; for one query a row and no mask (a decode step's usual
    call) its SDPA call made here directly, with the arguments it would pass: the same bits
    without its per-call checks (a few microseconds, once a row a layer a step)."""
    groups = getattr(module, "num_key_value_groups", 1)
    if (
        attention_mask is not None
        or query.shape[2] != 1
        or beyond_sdpa(kwargs)
        or (groups > 1 and not key.shape[-1] == value.shape[-1] <= 256)
    ):
        return sdpa_attention_forward(module, query, key, value, attention_mask, **kwargs)
    output = torch.nn.functional.scaled_dot_product_attention(
        query,
        key,
        value,
        attn_mask=None,
        dropout_p=kwargs.get("dropout", 0.0),
        scale=kwargs.get("scaling"),
        is_causal=False,
        enable_gqa=groups > 1,
    )
    output = output.reshape(output.shape[0], -1, 1, value.shape[-1])
    return output.transpose(1, 2).contiguous(), None


def row_attention_forward(
    module: torch.nn.Module,
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attention_mask: Tensor | None,
    **kwargs: Any,
) -> tuple[Tensor, None]:
    """SDPA per row over the row's contiguous real columns (see the module docstring)."""
    if attention_mask is None or query.shape[0] == 1 or attention_mask.dtype != torch.bool:
        return _attend(module, query, key, value, attention_mask, **kwargs)
    batch, _, queries, _ = query.shape
    slices = _LAST_MASKS.slices(attention_mask)
    outputs = [
        _attend(
            module,
            query[row : row + 1, :, cut.first_query :].contiguous(),
            key[row : row + 1, :, cut.start :],
            value[row : row + 1, :, cut.start :],
            cut.mask,
            **kwargs,
        )[0]
        for row, cut in enumerate(slices)
    ]
    if all(cut.first_query == 0 for cut in slices):  # every query real (a decode step): one copy
        return torch.cat(outputs), None
    output = outputs[0].new_zeros((batch, queries, *outputs[0].shape[2:]))
    for row, (cut, out) in enumerate(zip(slices, outputs, strict=True)):
        output[row, cut.first_query :] = out[0]
    return output, None


def kernel_row_attention_forward(
    module: torch.nn.Module,
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attention_mask: Tensor | None,
    **kwargs: Any,
) -> tuple[Tensor, None]:
    """``row_attention_forward``, with a decode step's rows in one kernel call where it takes
    them (``decode_attention``: the ``gguf`` format's)."""
    if query.shape[2] == 1 and not beyond_sdpa(kwargs) and not kwargs.get("dropout", 0.0):
        starts = decode_starts(query.shape[0], attention_mask)
        if starts is not None:
            groups = getattr(module, "num_key_value_groups", 1)
            output = decode_attention(query, key, value, starts, groups, kwargs.get("scaling"))
            if output is not None:
                return output, None
    return row_attention_forward(module, query, key, value, attention_mask, **kwargs)


def decode_starts(rows: int, attention_mask: Tensor | None) -> list[int] | None:
    """Each row's first attended column in a decode step where every column from there on is
    attended (the usual case: left padding, or a sliding window), else None."""
    if attention_mask is None:
        return [0] * rows
    if attention_mask.dtype != torch.bool:
        return None
    slices = _LAST_MASKS.slices(attention_mask)
    if any(cut.mask is not None or cut.first_query != 0 for cut in slices):
        return None
    return [cut.start for cut in slices]


AttentionInterface.register(ROW_ATTENTION, row_attention_forward)
AttentionMaskInterface.register(ROW_ATTENTION, sdpa_mask)
AttentionInterface.register(KERNEL_ROW_ATTENTION, kernel_row_attention_forward)
AttentionMaskInterface.register(KERNEL_ROW_ATTENTION, sdpa_mask)
