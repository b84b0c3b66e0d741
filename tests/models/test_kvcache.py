"""The growing cache layer: what the model reads equals transformers' concatenating layer."""

from __future__ import annotations

import torch
from transformers.cache_utils import DynamicLayer

from gapscope.models.kvcache import GROWTH_COLUMNS, GrowingLayer


def test_a_growing_layer_holds_what_concatenation_holds_across_reallocations() -> None:
    generator = torch.Generator().manual_seed(0)
    growing, reference = GrowingLayer(), DynamicLayer()  # type: ignore[no-untyped-call]
    # a long prefill, then one column a step past two reallocations, then a batch selection
    steps = [GROWTH_COLUMNS + 7] + [1] * (2 * GROWTH_COLUMNS + 3)
    for width in steps:
        keys = torch.randn((3, 2, width, 4), generator=generator)
        values = torch.randn((3, 2, width, 4), generator=generator)
        got = growing.update(keys, values)
        want = reference.update(keys, values)
        assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])
    assert growing.get_seq_length() == sum(steps)
    keep = torch.tensor([2, 0])
    growing.batch_select_indices(keep)
    reference.batch_select_indices(keep)
    last = torch.ones((2, 2, 1, 4))
    got, want = growing.update(last, last), reference.update(last, last)
    assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])
    # a crop narrows the filled part: the next step writes where the cropped columns were
    growing.crop(-5)
    reference.crop(-5)
    again = torch.full((2, 2, 1, 4), 2.0)
    got, want = growing.update(again, again), reference.update(again, again)
    assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])
    assert growing.get_seq_length() == reference.get_seq_length()
