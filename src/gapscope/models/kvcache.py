"""Reusable key/value caches for append-only conversations.

An S2B episode appends 30+ games to one conversation. Recomputing the whole prompt each
turn makes prefill quadratic in the episode length; keeping the keys/values of the last
turn and computing only the new suffix makes it linear. `PrefixCache` is a small LRU of
`KVEntry`s (token ids plus per-layer K/V for exactly those tokens, batch dimension
dropped); a request reuses the entry with the longest common token prefix.

The conversion helpers translate between these per-sequence entries and the batched,
left-padded `transformers` cache the model consumes, so rows with different cached
lengths can share one forward pass. With ``spill`` the cache keeps its entries' keys/values
in unnamed files (`gapscope.models.kvfiles`), not in memory.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from itertools import count
from typing import Any

import torch
from torch import Tensor
from transformers.cache_utils import Cache, DynamicLayer

from gapscope.models.kvfiles import LayerKV, SpilledLayers


@dataclass(frozen=True)
class KVEntry:
    """Keys/values computed for exactly `tokens` (1-D int64 tensor on the CPU)."""

    tokens: Tensor
    layers: tuple[LayerKV, ...]

    def __len__(self) -> int:
        return int(self.tokens.numel())

    @property
    def nbytes(self) -> int:
        """Bytes of keys and values held (what the cache's byte bound counts)."""
        return sum(k.nbytes + v.nbytes for k, v in self.layers)


def common_prefix_length(a: Tensor, b: Tensor) -> int:
    """Length of the longest common prefix of two 1-D token tensors."""
    n = min(a.numel(), b.numel())
    if n == 0:
        return 0
    differ = (a[:n] != b[:n]).nonzero()
    return n if differ.numel() == 0 else int(differ[0, 0])


class PrefixCache:
    """LRU of `KVEntry`s, partitioned into namespaces (one per hook configuration), bounded
    both in entries and in bytes (``max_bytes``, None for no byte bound).

    The byte bound is what keeps memory flat: an S2B conversation of 2,000 tokens holds 92 MB
    of SmolLM2 keys/values, so 16 entries alone were 1.4 GB of the demo's peak. An entry larger
    than the whole bound is not kept. With ``spill``, entries whose keys/values are in host
    memory go to unnamed temporary files (`gapscope.models.kvfiles`): the bound then counts
    their bytes on disk, a lookup maps the entry's file instead of holding it, and dropping the
    entry closes the file.
    Not thread-safe: the engine only touches it while holding its model lock.
    """

    def __init__(self, max_entries: int, max_bytes: int | None = None, spill: bool = False) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._entries: OrderedDict[int, tuple[str, Tensor, SpilledLayers | tuple[LayerKV, ...]]]
        self._entries = OrderedDict()
        self._ids = count()
        self.spills = spill
        """Whether entries in host memory go to files (`gapscope.models.kvfiles`)."""
        self.nbytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        while self._entries:
            self._drop(next(iter(self._entries)))

    def lookup(self, namespace: str, tokens: Tensor) -> tuple[KVEntry | None, int]:
        """The entry sharing the longest token prefix with `tokens`, and that length."""
        best_key, best_length = -1, 0
        for key, (space, cached, _) in self._entries.items():
            if space != namespace:
                continue
            length = common_prefix_length(cached, tokens)
            if length > best_length:
                best_key, best_length = key, length
        if best_length == 0:
            return None, 0
        self._entries.move_to_end(best_key)
        _, cached, layers = self._entries[best_key]
        if isinstance(layers, SpilledLayers):
            return KVEntry(cached, layers.load()), best_length
        return KVEntry(cached, layers), best_length

    def store(self, namespace: str, entry: KVEntry) -> None:
        """Add `entry`, dropping entries it extends (it serves every lookup they would).

        The cache keeps no reference to ``entry``'s tensors: views into a batch's cache are
        copied (into memory or, spilling, into a file), so the batch's buffers can go."""
        if self.max_entries <= 0 or len(entry) == 0:
            return
        if self.max_bytes is not None and entry.nbytes > self.max_bytes:
            return
        superseded = [
            key
            for key, (space, cached, _) in self._entries.items()
            if space == namespace
            and cached.numel() <= len(entry)
            and common_prefix_length(cached, entry.tokens) == cached.numel()
        ]
        for key in superseded:
            self._drop(key)
        key = next(self._ids)
        layers: SpilledLayers | tuple[LayerKV, ...]
        if self.spills and _in_host_memory(entry):
            layers = SpilledLayers(entry.layers)
        else:
            layers = tuple((_owned(k), _owned(v)) for k, v in entry.layers)
        self._entries[key] = (namespace, entry.tokens, layers)
        self.nbytes += entry.nbytes
        while len(self._entries) > self.max_entries or (
            self.max_bytes is not None and self.nbytes > self.max_bytes
        ):
            self._drop(next(iter(self._entries)))

    def _drop(self, key: int) -> None:
        _, _, layers = self._entries.pop(key)
        if isinstance(layers, SpilledLayers):
            self.nbytes -= layers.nbytes
            layers.close()
        else:
            self.nbytes -= sum(k.nbytes + v.nbytes for k, v in layers)


def _in_host_memory(entry: KVEntry) -> bool:
    return all(k.device.type == "cpu" and v.device.type == "cpu" for k, v in entry.layers)


def _owned(tensor: Tensor) -> Tensor:
    """``tensor``, or a copy of it where it views a larger storage (a batch's cache buffer,
    which it would otherwise keep alive)."""
    if tensor.is_contiguous() and tensor.untyped_storage().nbytes() == tensor.nbytes:
        return tensor
    return tensor.clone(memory_format=torch.contiguous_format)


GROWTH_COLUMNS = 256
"""Columns a growing cache layer adds beyond what it needs when it must reallocate."""


class GrowingLayer(DynamicLayer):  # type: ignore[no-untyped-call]
    """A `DynamicLayer` whose keys/values live in a buffer with spare columns (and rows).

    transformers' `DynamicLayer` concatenates each step's keys/values onto the whole cache, so
    a decode step copies every cached column of every layer: at a 2,300-token S2B context and
    batch 5 that copy was two thirds of a step (`torch.cat`, profiled on SmolLM2). Here a step
    writes its columns into the spare ones and the model sees a view of the filled part; a
    reallocation adds `GROWTH_COLUMNS` beyond what is needed (or doubles, or reaches
    ``capacity``, whichever is more), so the copies amortise to a constant per step. What the
    model reads is the same tensor values as `DynamicLayer` would give it.

    ``capacity``: the columns the whole batch can reach (its prefix, prompt and longest reply),
    allocated at once so that the batch never reallocates: a reallocation holds the old buffer
    and the new one together (twice the batch's keys/values at the peak). Columns never written
    are never touched, so on the CPU they cost no resident memory (a buffer of 4 MB or more is a
    fresh mapping, ``gapscope.models.heap``).

    The filled part is the view (`keys`: the first rows and columns of the buffer), so the
    inherited methods need no override but the batch selection, which keeps the chosen rows in
    place in the buffer (ascending rows, as the engine drops finished ones) instead of copying
    them out and regrowing; a crop narrows the view and keeps the buffer, and a reorder hands
    its new tensors over as the buffer at the next update. `append_rows` adds rows (requests
    joining a running batch) into the rows finished ones freed, reallocating only when the
    buffer has none left; it then reserves ``rows`` (the most a batch holds) at once.
    """

    _key_buffer: Tensor | None = None
    _value_buffer: Tensor | None = None

    def __init__(self, capacity: int = 0, rows: int = 0) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.capacity = capacity
        self.rows = rows

    def adopt(self, key_buffer: Tensor, value_buffer: Tensor, filled: int) -> None:
        """Start from buffers whose first ``filled`` columns hold keys/values already."""
        self.lazy_initialization(key_buffer, value_buffer)
        self._key_buffer, self._value_buffer = key_buffer, value_buffer
        self.keys, self.values = key_buffer[:, :, :filled], value_buffer[:, :, :filled]

    def _buffers(self) -> tuple[Tensor, Tensor]:
        """The buffers behind the filled view, or the view itself where it was replaced."""
        keys, values = self.keys, self.values
        assert keys is not None and values is not None
        key_buffer, value_buffer = self._key_buffer, self._value_buffer
        if key_buffer is None or value_buffer is None or not _shares_storage(keys, key_buffer):
            return keys, values
        return key_buffer, value_buffer

    def _reserve(self, rows: int, columns: int) -> tuple[Tensor, Tensor]:
        """Buffers with at least ``rows`` rows and ``columns`` columns holding the filled part:
        the current ones where they are large enough, new ones (see the class) otherwise."""
        key_buffer, value_buffer = self._buffers()
        if rows <= key_buffer.shape[0] and columns <= key_buffer.shape[-2]:
            return key_buffer, value_buffer
        filled_columns = key_buffer.shape[-2]
        if columns > filled_columns:
            columns = max(columns + GROWTH_COLUMNS, 2 * filled_columns, self.capacity)
        else:
            columns = filled_columns
        rows = max(rows, key_buffer.shape[0], self.rows)
        assert self.keys is not None and self.values is not None
        return _regrown(self.keys, rows, columns), _regrown(self.values, rows, columns)

    def _fill(self, key_buffer: Tensor, value_buffer: Tensor, rows: int, columns: int) -> None:
        self._key_buffer, self._value_buffer = key_buffer, value_buffer
        self.keys, self.values = key_buffer[:rows, :, :columns], value_buffer[:rows, :, :columns]

    def update(
        self, key_states: Tensor, value_states: Tensor, *args: Any, **kwargs: Any
    ) -> tuple[Tensor, Tensor]:
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
            self.keys, self.values = key_states[:, :, :0], value_states[:, :, :0]
        assert self.keys is not None
        rows, length = self.keys.shape[0], self.keys.shape[-2]
        end = length + key_states.shape[-2]
        key_buffer, value_buffer = self._reserve(rows, end)
        key_buffer[:rows, :, length:end] = key_states
        value_buffer[:rows, :, length:end] = value_states
        self._fill(key_buffer, value_buffer, rows, end)
        assert self.values is not None
        return self.keys, self.values

    def next_column(self) -> tuple[Tensor, Tensor, int]:
        """The buffers, their filled view grown by one column as ``update`` grows it, and that
        column, for a decode step's keys and values to be written into in place
        (``decode_step``: the kernel writes them; nothing else may run in between)."""
        assert self.keys is not None
        rows, column = self.keys.shape[0], self.keys.shape[-2]
        key_buffer, value_buffer = self._reserve(rows, column + 1)
        self._fill(key_buffer, value_buffer, rows, column + 1)
        return key_buffer, value_buffer, column

    def append_rows(self, keys: Tensor, values: Tensor) -> None:
        """Add rows whose keys/values (``[rows, heads, n, dim]``, n at most the filled columns)
        end at the last filled column; their columns before those are zeros (masked padding)."""
        assert self.keys is not None
        rows, length = self.keys.shape[0], self.keys.shape[-2]
        added, width = keys.shape[0], keys.shape[-2]
        if width > length:
            raise ValueError(f"{width} columns of new rows do not fit in {length} filled ones")
        key_buffer, value_buffer = self._reserve(rows + added, length)
        for buffer, new in ((key_buffer, keys), (value_buffer, values)):
            buffer[rows : rows + added, :, : length - width] = 0
            buffer[rows : rows + added, :, length - width : length] = new
        self._fill(key_buffer, value_buffer, rows + added, length)

    def batch_select_indices(self, indices: Tensor) -> None:
        kept = [int(row) for row in indices.tolist()]
        keys, key_buffer, value_buffer = self.keys, self._key_buffer, self._value_buffer
        if (
            keys is None
            or key_buffer is None
            or value_buffer is None
            or kept != sorted(set(kept))
            or not _shares_storage(keys, key_buffer)
        ):
            super().batch_select_indices(indices)
            return
        length = keys.shape[-2]
        for slot, row in enumerate(kept):  # slot <= row: each copy reads a row not yet written
            if slot != row:  # the filled columns only: the others were never touched
                key_buffer[slot, :, :length] = key_buffer[row, :, :length]
                value_buffer[slot, :, :length] = value_buffer[row, :, :length]
        self._fill(key_buffer, value_buffer, len(kept), length)


def _shares_storage(view: Tensor, buffer: Tensor) -> bool:
    return view.untyped_storage().data_ptr() == buffer.untyped_storage().data_ptr()


def _regrown(filled: Tensor, rows: int, columns: int) -> Tensor:
    """A buffer of ``rows`` rows and ``columns`` columns starting with ``filled``'s."""
    grown = filled.new_empty((rows, filled.shape[1], columns, filled.shape[3]))
    grown[: filled.shape[0], :, : filled.shape[-2]] = filled
    return grown


class GrowingCache(Cache):
    """A transformers cache of `GrowingLayer`s, one per decoder layer, made on first use,
    each allocating ``capacity`` columns at once (and ``rows`` rows when rows join, see
    `GrowingLayer`)."""

    def __init__(self, capacity: int = 0, rows: int = 0) -> None:
        layer = partial(GrowingLayer, capacity, rows)  # transformers calls it like the layer class
        super().__init__(layer_class_to_replicate=layer)  # type: ignore[arg-type]

    def growing_layer(self, index: int) -> GrowingLayer | None:
        """Layer ``index`` where it is a filled `GrowingLayer` on this host (no offloading)."""
        if self.offloading or index >= len(self.layers):
            return None
        layer = self.layers[index]
        return layer if isinstance(layer, GrowingLayer) and layer.keys is not None else None

    def append_rows(self, other: Cache) -> None:
        """Add ``other``'s rows (requests joining a batch) to each layer, aligned to end at its
        last filled column (`GrowingLayer.append_rows`)."""
        for layer, (keys, values) in zip(self.layers, _layer_tensors(other), strict=True):
            assert isinstance(layer, GrowingLayer)
            layer.append_rows(keys, values)


def batch_cache(
    prefixes: Sequence[tuple[KVEntry | None, int]], capacity: int = 0, rows: int = 0
) -> tuple[GrowingCache, int]:
    """A model cache holding each row's reused prefix, right-aligned (left-padded).

    Row `i` reuses the first `n_i` positions of its entry; its keys/values occupy the
    last `n_i` of `width = max(n_i)` columns and the padding columns are zeros (they are
    masked out). Each layer's buffer has room for ``capacity`` columns (at least ``width``)
    and the prefixes are written straight into it; ``rows`` is the most rows the cache will
    hold if rows join (`GrowingLayer`). Returns the cache and `width`.
    """
    width = max((n for _, n in prefixes), default=0)
    cache = GrowingCache(capacity, rows)
    template = next((entry for entry, n in prefixes if entry is not None and n > 0), None)
    if template is None:
        return cache, 0
    columns = max(width, capacity)
    for layer, (k0, v0) in enumerate(template.layers):
        keys = k0.new_empty((len(prefixes), k0.shape[0], columns, k0.shape[2]))
        values = v0.new_empty((len(prefixes), v0.shape[0], columns, v0.shape[2]))
        for row, (entry, n) in enumerate(prefixes):
            keys[row, :, : width - n] = 0
            values[row, :, : width - n] = 0
            if entry is not None and n > 0:
                k, v = entry.layers[layer]
                keys[row, :, width - n : width] = k[:, :n]
                values[row, :, width - n : width] = v[:, :n]
        grown = GrowingLayer(capacity, rows)
        grown.adopt(keys, values, width)
        cache.layers.append(grown)
    return cache, width


def _layer_tensors(cache: Any) -> list[LayerKV]:
    """Per-layer (keys, values) of a transformers cache, across cache API versions."""
    layers = getattr(cache, "layers", None)
    if layers is not None:
        return [(layer.keys, layer.values) for layer in layers]
    return list(zip(cache.key_cache, cache.value_cache, strict=True))


def extract_row(cache: Any, row: int, columns: Tensor) -> tuple[LayerKV, ...]:
    """One row's keys/values at `columns` (its unmasked positions) out of a batch: views of
    the batch's buffers where the columns are one contiguous range (a row's real tokens are,
    see the engine), copies otherwise. A `PrefixCache` copies views it keeps."""
    first, count_ = int(columns[0]), columns.numel()
    if int(columns[-1]) - first + 1 == count_:
        return tuple(
            (k[row, :, first : first + count_], v[row, :, first : first + count_])
            for k, v in _layer_tensors(cache)
        )
    return tuple(
        (k[row].index_select(1, columns), v[row].index_select(1, columns))
        for k, v in _layer_tensors(cache)
    )


def as_token_tensor(tokens: Sequence[int]) -> Tensor:
    """Token ids as the 1-D CPU int64 tensor `KVEntry` and `PrefixCache` use."""
    return torch.tensor(list(tokens), dtype=torch.long)
