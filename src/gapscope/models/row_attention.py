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

ROW_ATTENTION = "gapscope_rows"
"""The name the engine's models run their attention under (registered below)."""


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
        return sdpa_attention_forward(module, query, key, value, attention_mask, **kwargs)
    batch, _, queries, _ = query.shape
    output: Tensor | None = None
    for row, cut in enumerate(_LAST_MASKS.slices(attention_mask)):
        out, _ = sdpa_attention_forward(
            module,
            query[row : row + 1, :, cut.first_query :].contiguous(),
            key[row : row + 1, :, cut.start :],
            value[row : row + 1, :, cut.start :],
            cut.mask,
            **kwargs,
        )
        if output is None:
            output = out.new_zeros((batch, queries, *out.shape[2:]))
        output[row, cut.first_query :] = out[0]
    assert output is not None
    return output, None


AttentionInterface.register(ROW_ATTENTION, row_attention_forward)
AttentionMaskInterface.register(ROW_ATTENTION, sdpa_mask)
