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


def test_the_prefix_cache_keeps_within_its_byte_bound_dropping_the_oldest() -> None:
    import torch

    from gapscope.models.kvcache import KVEntry, PrefixCache

    def entry(first: int, length: int) -> KVEntry:
        kv = torch.zeros((2, length, 8))  # 64 bytes a token for keys, as many for values
        return KVEntry(torch.arange(first, first + length), ((kv, kv.clone()),))

    cache = PrefixCache(max_entries=16, max_bytes=3 * 1280)
    for first in (0, 100, 200, 300):
        cache.store("", entry(first, 10))  # 1,280 bytes each
    assert len(cache) == 3 and cache.nbytes == 3 * 1280
    assert cache.lookup("", torch.arange(0, 10))[1] == 0  # the oldest went
    assert cache.lookup("", torch.arange(300, 310))[1] == 10
    cache.store("", entry(1000, 40))  # larger than the whole bound: not kept
    assert len(cache) == 3 and cache.nbytes == 3 * 1280
    cache.clear()
    assert cache.nbytes == 0
