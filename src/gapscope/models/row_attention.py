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
    for row in range(batch):
        allowed = attention_mask[row, 0]
        attending = allowed.any(dim=1)  # the row's real queries
        attended = allowed.any(dim=0)  # its real columns (a window's too)
        first_query = int(attending.to(torch.int8).argmax())
        start = int(attended.to(torch.int8).argmax())
        if not (bool(attending[first_query:].all()) and bool(attended[start:].all())):
            first_query, start = 0, 0  # not one contiguous block: the stock masked path
        out, _ = sdpa_attention_forward(
            module,
            query[row : row + 1, :, first_query:].contiguous(),
            key[row : row + 1, :, start:],
            value[row : row + 1, :, start:],
            _row_mask(attention_mask[row : row + 1, :, first_query:, start:].contiguous()),
            **kwargs,
        )
        if output is None:
            output = out.new_zeros((batch, queries, *out.shape[2:]))
        output[row, first_query:] = out[0]
    assert output is not None
    return output, None


AttentionInterface.register(ROW_ATTENTION, row_attention_forward)
AttentionMaskInterface.register(ROW_ATTENTION, sdpa_mask)
