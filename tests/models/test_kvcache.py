"""The KV caches: the growing layer reads what transformers' concatenating layer reads, a
batch's cache holds its prefixes, and the prefix cache (in memory or spilled to unnamed files)
returns the bytes it was given and leaves nothing on disk once an entry or the process goes."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
import torch
from transformers.cache_utils import DynamicLayer

from gapscope.models.kvcache import (
    GROWTH_COLUMNS,
    GrowingLayer,
    KVEntry,
    PrefixCache,
    _layer_tensors,
    batch_cache,
)
from gapscope.models.kvfiles import LayerKV, SpilledLayers
from tests.models.open_files import mapped_files_in, opened_files_in


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


def _random_entry(first: int, length: int, seed: int) -> KVEntry:
    """Two layers of keys/values for tokens ``first..first+length`` (as a model's would be)."""
    generator = torch.Generator().manual_seed(seed)
    layers = tuple(
        (torch.randn((2, length, 8), generator=generator), torch.randn((2, length, 8)))
        for _ in range(2)
    )
    return KVEntry(torch.arange(first, first + length), layers)


def _equal_layers(got: Sequence[LayerKV], want: Sequence[LayerKV]) -> bool:
    pairs = zip(got, want, strict=True)
    return all(torch.equal(k, k0) and torch.equal(v, v0) for (k, v), (k0, v0) in pairs)


def test_a_spilling_prefix_cache_keeps_its_entries_in_unnamed_files_within_its_bound(
    private_tmpdir: Path,
) -> None:
    entry, other = _random_entry(0, 12, seed=1), _random_entry(100, 12, seed=2)
    cache = PrefixCache(max_entries=16, max_bytes=2 * entry.nbytes, spill=True)
    cache.store("", entry)
    cache.store("", other)
    # one file an entry, on TMPDIR's disk, holding the entry's bytes, with no name to leave
    opened = opened_files_in(private_tmpdir)
    assert len(opened) == 2 and sum(opened.values()) == cache.nbytes == 2 * entry.nbytes
    assert not any(private_tmpdir.iterdir())
    found, length = cache.lookup("", torch.arange(0, 20))
    assert length == 12 and found is not None
    assert _equal_layers(found.layers, entry.layers)  # bitwise: the bytes written
    found.layers[0][0].zero_()  # a write stays in this load's copy-on-write pages
    found, _ = cache.lookup("", torch.arange(0, 20))
    assert found is not None and torch.equal(found.layers[0][0], entry.layers[0][0])
    cache.store("", _random_entry(200, 12, seed=3))  # over the bound: the oldest entry goes
    assert len(cache) == 2 and cache.nbytes == 2 * entry.nbytes
    assert cache.lookup("", torch.arange(100, 112))[1] == 0
    cache.clear()
    assert cache.nbytes == 0


def test_a_dropped_entry_gives_its_disk_space_back_once_no_tensor_views_it(
    private_tmpdir: Path,
) -> None:
    entry = _random_entry(0, 12, seed=1)
    cache = PrefixCache(max_entries=1, spill=True)
    cache.store("", entry)
    (kept,) = opened_files_in(private_tmpdir)
    found, _ = cache.lookup("", torch.arange(0, 12))
    assert found is not None and set(mapped_files_in(private_tmpdir)) == {kept}
    cache.store("", _random_entry(100, 12, seed=2))  # the first entry goes
    cache.clear()  # and the second, never loaded: nothing holds its file any more
    gc.collect()
    assert set(opened_files_in(private_tmpdir)) == set(mapped_files_in(private_tmpdir)) == {kept}
    assert _equal_layers(found.layers, entry.layers)  # the mapping outlives the entry
    del found
    gc.collect()
    assert not opened_files_in(private_tmpdir) and not mapped_files_in(private_tmpdir)
    cache.store("", entry)
    assert opened_files_in(private_tmpdir)
    del cache  # a cache that goes without being cleared closes its files too
    gc.collect()
    assert not opened_files_in(private_tmpdir)


def test_a_spilled_entry_is_read_only_where_touched(private_tmpdir: Path) -> None:
    """A batch copies a few columns of an entry: the rest is never read (the kernel maps the
    file in folios, up to 2 MiB on ext4, so that is the grain of what is read)."""
    layers = tuple((torch.randn((4, 8192, 64)), torch.randn((4, 8192, 64))) for _ in range(2))
    spilled = SpilledLayers(layers)  # 32 MiB
    loaded = spilled.load()
    assert list(mapped_files_in(private_tmpdir).values()) == [0]  # mapped, nothing read yet
    assert torch.equal(loaded[1][0][0, :8], layers[1][0][0, :8])  # 2 KiB of 32 MiB
    (resident,) = mapped_files_in(private_tmpdir).values()
    assert 0 < resident <= spilled.nbytes // 8


def test_a_closed_spilled_entry_is_not_loaded_again_but_what_was_loaded_stays_readable(
    private_tmpdir: Path,
) -> None:
    """A load after `close` would map whatever file took over the descriptor's number."""
    layers = _random_entry(0, 12, seed=1).layers
    spilled = SpilledLayers(layers)
    loaded = spilled.load()
    spilled.close()
    with pytest.raises(ValueError, match="closed"):
        spilled.load()
    assert _equal_layers(loaded, layers)


_SPILL_AND_WAIT = """
import sys
import torch
from gapscope.models.kvcache import KVEntry, PrefixCache

cache = PrefixCache(max_entries=4, spill=True)
for first in (0, 100):
    layers = tuple((torch.randn((2, 64, 8)), torch.randn((2, 64, 8))) for _ in range(2))
    cache.store("", KVEntry(torch.arange(first, first + 64), layers))
found, _ = cache.lookup("", torch.arange(64))  # a mapping is open too
print(cache.nbytes, flush=True)
sys.stdin.read()  # until killed
"""


def test_a_killed_process_leaves_none_of_its_spilled_entries_on_disk(tmp_path: Path) -> None:
    """An OOM-killed engine must not leave its cache's files (2 GiB a model) behind."""
    source = Path(__file__).resolve().parents[2] / "src"
    environment = {
        **os.environ,
        "TMPDIR": str(tmp_path),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(source), os.environ.get("PYTHONPATH")])),
    }
    child = subprocess.Popen(
        [sys.executable, "-c", _SPILL_AND_WAIT],
        env=environment,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        nbytes = int(child.stdout.readline())  # type: ignore[union-attr]
        # the entries' bytes are on TMPDIR's disk, whether the files have names or not
        named = {f.stat().st_ino: f.stat().st_size for f in tmp_path.rglob("*") if f.is_file()}
        assert sum({**opened_files_in(tmp_path, child.pid), **named}.values()) == nbytes > 0
    finally:
        child.send_signal(signal.SIGKILL)
        child.communicate()
    assert child.returncode == -signal.SIGKILL
    assert not any(tmp_path.iterdir())


def test_a_cache_keeps_a_copy_of_a_view_not_the_buffer_behind_it() -> None:
    buffer = torch.randn((3, 2, 40, 8))  # a batch's keys, say
    view = buffer[1, :, 5:17]
    cache = PrefixCache(max_entries=4)
    cache.store("", KVEntry(torch.arange(12), ((view, view),)))
    found, _ = cache.lookup("", torch.arange(12))
    assert found is not None
    kept = found.layers[0][0]
    assert torch.equal(kept, view)
    assert kept.untyped_storage().nbytes() == view.nbytes  # not the whole batch buffer


def test_a_reserved_layer_never_reallocates_and_drops_rows_in_place() -> None:
    generator = torch.Generator().manual_seed(0)
    prefix = torch.randn((3, 2, 5, 4), generator=generator)
    growing, reference = GrowingLayer(capacity=5 + 9), DynamicLayer()  # type: ignore[no-untyped-call]
    buffer = prefix.new_empty((3, 2, 14, 4))
    buffer[:, :, :5] = prefix
    growing.adopt(buffer, buffer.clone(), 5)
    reference.update(prefix, prefix.clone())
    steps = [3] + [1] * 6  # a prompt's span, then decode steps: 14 columns in all
    for step, width in enumerate(steps):
        if step == 3:  # the middle row finishes
            keep = torch.tensor([0, 2])
            growing.batch_select_indices(keep)
            reference.batch_select_indices(keep)
        rows = 3 if step < 3 else 2
        keys = torch.randn((rows, 2, width, 4), generator=generator)
        values = torch.randn((rows, 2, width, 4), generator=generator)
        got, want = growing.update(keys, values), reference.update(keys, values)
        assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])
        assert got[0].untyped_storage().data_ptr() == buffer.untyped_storage().data_ptr()


def test_a_batch_cache_holds_the_prefixes_right_aligned_with_room_reserved() -> None:
    short, long = _random_entry(0, 4, seed=4), _random_entry(0, 9, seed=5)
    cache, width = batch_cache([(short, 4), (None, 0), (long, 7)], capacity=20)
    assert width == 7
    for layer, (keys, values) in enumerate(_layer_tensors(cache)):
        assert keys.shape == (3, 2, 7, 8)
        assert cache.layers[layer]._key_buffer.shape[-2] == 20  # type: ignore[attr-defined]
        for tensor, index in ((keys, 0), (values, 1)):
            assert torch.equal(tensor[0, :, 3:], short.layers[layer][index])
            assert torch.equal(tensor[2], long.layers[layer][index][:, :7])
            assert not tensor[0, :, :3].any() and not tensor[1].any()  # padding is zeros


def test_appended_rows_end_at_the_last_column_and_keep_growing_with_the_batch() -> None:
    generator = torch.Generator().manual_seed(1)
    growing = GrowingLayer(capacity=8, rows=3)
    first = torch.randn((2, 2, 6, 4), generator=generator)
    growing.update(first, first.clone())
    storage = growing.keys.untyped_storage().data_ptr()  # type: ignore[union-attr]
    growing.batch_select_indices(torch.tensor([1]))
    joiner = torch.randn((2, 2, 4, 4), generator=generator)
    growing.append_rows(joiner, joiner.clone())  # into the freed row and the reserved one
    keys = growing.keys
    assert keys is not None and keys.shape == (3, 2, 6, 4)
    assert keys.untyped_storage().data_ptr() == storage  # the batch's rows were not copied
    assert torch.equal(keys[0], first[1])
    assert torch.equal(keys[1:, :, 2:], joiner) and not keys[1:, :, :2].any()
    # a step past the reserved columns, and a fourth row past the reserved rows: both regrow
    steps = torch.randn((3, 2, 5, 4), generator=generator)
    got, _ = growing.update(steps, steps)
    assert torch.equal(got[:, :, :6], keys) and torch.equal(got[:, :, 6:], steps)
    late = torch.randn((1, 2, 11, 4), generator=generator)
    growing.append_rows(late, late)
    assert growing.keys is not None and torch.equal(growing.keys[3], late[0])
    assert torch.equal(growing.keys[:3], got)
    with pytest.raises(ValueError, match="do not fit"):
        growing.append_rows(torch.zeros((1, 2, 12, 4)), torch.zeros((1, 2, 12, 4)))
