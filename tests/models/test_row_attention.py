"""A row of a padded batch gets the attention it gets alone (``row_attention``).

Which requests share a batch depends on timing, so a reply must not depend on its batch.
Stock SDPA over a left-padded batch reduces each row over the padded width (on SmolLM2 a
padded row's logits moved by ~3e-5); here every row's attention output, batched beside
longer rows, is bitwise what the stock path computes for that row alone: prefill (causal),
a decode step over a padded KV cache, and a sliding-window mask, with SmolLM2's grouped
heads (9 query heads over 3 key/value heads). The attention is isolated from the linear
layers, whose float sums can depend on a batch's row count on their own.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch import nn
from transformers.integrations.sdpa_attention import sdpa_attention_forward

from gapscope.models.row_attention import ROW_ATTENTION, row_attention_forward
from tests.models.conftest import EngineFactory

HEADS, KV_HEADS, DIM = 9, 3, 64
LENGTHS = [5, 11, 37]


class _Attention(nn.Module):
    """What the attention functions read off a model's attention module."""

    is_causal = True
    num_key_value_groups = HEADS // KV_HEADS


def _mask(lengths: list[int], queries: int, window: int | None) -> torch.Tensor:
    """HF's boolean mask (True attends) for left-padded rows whose last ``queries``
    positions are new: causal, over real columns, within ``window`` if given."""
    width = max(lengths)
    query_at = torch.arange(width - queries, width)[:, None]
    key_at = torch.arange(width)[None, :]
    rows = []
    for length in lengths:
        allowed = (key_at <= query_at) & (key_at >= width - length)
        if window is not None:
            allowed &= query_at - key_at < window
        rows.append(allowed)
    return torch.stack(rows)[:, None]


@pytest.mark.parametrize(
    ("queries", "window"), [(37, None), (1, None), (37, 4)], ids=["prefill", "decode", "window"]
)
def test_a_padded_row_gets_the_attention_it_gets_alone(queries: int, window: int | None) -> None:
    generator = torch.Generator().manual_seed(0)
    width = max(LENGTHS)
    query = torch.randn(len(LENGTHS), HEADS, queries, DIM, generator=generator)
    key = torch.randn(len(LENGTHS), KV_HEADS, width, DIM, generator=generator)
    value = torch.randn(len(LENGTHS), KV_HEADS, width, DIM, generator=generator)
    module = _Attention()
    batched, _ = row_attention_forward(
        module, query, key, value, _mask(LENGTHS, queries, window), scaling=DIM**-0.5
    )
    for row, length in enumerate(LENGTHS):
        real = min(queries, length)
        alone_mask = _mask([length], real, window)
        alone, _ = sdpa_attention_forward(
            module,
            query[row : row + 1, :, queries - real :].contiguous(),
            key[row : row + 1, :, width - length :].contiguous(),
            value[row : row + 1, :, width - length :].contiguous(),
            None if window is None else alone_mask,
            scaling=DIM**-0.5,
        )
        assert torch.equal(batched[row, queries - real :], alone[0]), f"row {row}"
        assert not batched[row, : queries - real].any(), "padded queries are left zero"


def test_each_mask_is_read_for_itself_when_layers_share_masks() -> None:
    """Rows are read once per mask object (a forward pass's layers share one, or two that
    alternate): a later pass's new mask, here the same shape with other padding and made
    while the first is still alive, must get its own rows, not the remembered ones."""
    generator = torch.Generator().manual_seed(1)
    width, module = max(LENGTHS), _Attention()
    query = torch.randn(len(LENGTHS), HEADS, 1, DIM, generator=generator)
    key = torch.randn(len(LENGTHS), KV_HEADS, width, DIM, generator=generator)
    value = torch.randn(len(LENGTHS), KV_HEADS, width, DIM, generator=generator)
    first, window = _mask(LENGTHS, 1, None), _mask(LENGTHS, 1, 4)
    other_lengths = [30, 2, 37]
    other = _mask(other_lengths, 1, None)
    results = {}
    for name, mask in [("first", first), ("window", window), ("first", first), ("other", other)]:
        out, _ = row_attention_forward(module, query, key, value, mask, scaling=DIM**-0.5)
        assert results.setdefault(name, out) is out or torch.equal(results[name], out)
    for row, length in enumerate(other_lengths):
        alone, _ = sdpa_attention_forward(
            module,
            query[row : row + 1],
            key[row : row + 1, :, width - length :].contiguous(),
            value[row : row + 1, :, width - length :].contiguous(),
            None,
            scaling=DIM**-0.5,
        )
        assert torch.equal(results["other"][row], alone[0]), f"row {row}"
    assert not torch.equal(results["other"], results["first"])


def test_the_engine_runs_its_model_under_row_attention(
    make_engine: EngineFactory, tiny_gemma_checkpoint: Path
) -> None:
    assert make_engine().model.config._attn_implementation == ROW_ATTENTION


@pytest.mark.parametrize(
    ("heads", "kv_heads", "dim"), [(9, 3, 64), (4, 1, 256), (4, 4, 32), (4, 2, 320)]
)
def test_a_decode_steps_direct_sdpa_call_is_transformers_own(
    heads: int, kv_heads: int, dim: int
) -> None:
    """One query a row, no mask: the call ``row_attention`` makes itself is bitwise
    ``sdpa_attention_forward``'s, with a scaling other than SDPA's default (Gemma 3 scales
    by its ``query_pre_attn_scalar``), grouped heads or not, and a head wider than grouped
    SDPA takes (there the stock function, which repeats keys and values)."""
    generator = torch.Generator().manual_seed(heads * dim)
    module = _Attention()
    module.num_key_value_groups = heads // kv_heads  # type: ignore[misc]
    query = torch.randn(1, heads, 1, dim, generator=generator)
    key = torch.randn(1, kv_heads, 23, dim, generator=generator)
    value = torch.randn(1, kv_heads, 23, dim, generator=generator)
    options = {"dropout": 0.0, "scaling": 0.37, "sliding_window": None}
    got, _ = row_attention_forward(module, query, key, value, None, **options)
    expected, _ = sdpa_attention_forward(module, query, key, value, None, **options)
    assert torch.equal(got, expected)
    assert got.stride() == expected.stride()
    default, _ = sdpa_attention_forward(module, query, key, value, None, dropout=0.0)
    assert not torch.equal(got, default)
