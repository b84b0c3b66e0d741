"""Reusable key/value caches for append-only conversations.

An S2B episode appends 30+ games to one conversation. Recomputing the whole prompt each
turn makes prefill quadratic in the episode length; keeping the keys/values of the last
turn and computing only the new suffix makes it linear. `PrefixCache` is a small LRU of
`KVEntry`s (token ids plus per-layer K/V for exactly those tokens, batch dimension
dropped); a request reuses the entry with the longest common token prefix.

The conversion helpers translate between these per-sequence entries and the batched,
left-padded `transformers` cache the model consumes, so rows with different cached
lengths can share one forward pass.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import count
from typing import Any

import torch
from torch import Tensor
from transformers.cache_utils import Cache, DynamicLayer

LayerKV = tuple[Tensor, Tensor]
"""Keys and values of one layer for one sequence, each `[kv_heads, seq_len, head_dim]`."""


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
    than the whole bound is not kept.
    Not thread-safe: the engine only touches it while holding its model lock.
    """

    def __init__(self, max_entries: int, max_bytes: int | None = None) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._entries: OrderedDict[int, tuple[str, KVEntry]] = OrderedDict()
        self._ids = count()
        self.nbytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        self._entries.clear()
        self.nbytes = 0

    def lookup(self, namespace: str, tokens: Tensor) -> tuple[KVEntry | None, int]:
        """The entry sharing the longest token prefix with `tokens`, and that length."""
        best_key, best, best_length = -1, None, 0
        for key, (space, entry) in self._entries.items():
            if space != namespace:
                continue
            length = common_prefix_length(entry.tokens, tokens)
            if length > best_length:
                best_key, best, best_length = key, entry, length
        if best is not None:
            self._entries.move_to_end(best_key)
        return best, best_length

    def store(self, namespace: str, entry: KVEntry) -> None:
        """Add `entry`, dropping entries it extends (it serves every lookup they would)."""
        if self.max_entries <= 0 or len(entry) == 0:
            return
        if self.max_bytes is not None and entry.nbytes > self.max_bytes:
            return
        superseded = [
            key
            for key, (space, old) in self._entries.items()
            if space == namespace
            and len(old) <= len(entry)
            and common_prefix_length(old.tokens, entry.tokens) == len(old)
        ]
        for key in superseded:
            self.nbytes -= self._entries.pop(key)[1].nbytes
        self._entries[next(self._ids)] = (namespace, entry)
        self.nbytes += entry.nbytes
        while len(self._entries) > self.max_entries or (
            self.max_bytes is not None and self.nbytes > self.max_bytes
        ):
            self.nbytes -= self._entries.popitem(last=False)[1][1].nbytes


GROWTH_COLUMNS = 256
"""Columns a growing cache layer adds beyond what it needs when it must reallocate."""


class GrowingLayer(DynamicLayer):  # type: ignore[no-untyped-call]
    """A `DynamicLayer` whose keys/values live in a buffer with spare columns.

    transformers' `DynamicLayer` concatenates each step's keys/values onto the whole cache, so
    a decode step copies every cached column of every layer: at a 2,300-token S2B context and
    batch 5 that copy was two thirds of a step (`torch.cat`, profiled on SmolLM2). Here a step
    writes its columns into the spare ones and the model sees a view of the filled part; a
    reallocation adds `GROWTH_COLUMNS` beyond what is needed (or doubles, whichever is more),
    so the copies amortise to a constant per step. What the model reads is the same tensor
    values as `DynamicLayer` would give it.

    The filled length is the view's (`keys`), so the inherited methods need no override: one
    that narrows the view (`crop`) keeps the buffer, and one that replaces the tensors (a
    batch selection, a reorder) hands the new ones over as the buffer at the next update.
    """

    _key_buffer: Tensor | None = None
    _value_buffer: Tensor | None = None

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]

    def update(
        self, key_states: Tensor, value_states: Tensor, *args: Any, **kwargs: Any
    ) -> tuple[Tensor, Tensor]:
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
            self.keys, self.values = key_states[:, :, :0], value_states[:, :, :0]
        keys, values = self.keys, self.values
        assert keys is not None and values is not None
        key_buffer, value_buffer = self._key_buffer, self._value_buffer
        if key_buffer is None or value_buffer is None or not _shares_storage(keys, key_buffer):
            key_buffer, value_buffer = keys, values
        length, end = keys.shape[-2], keys.shape[-2] + key_states.shape[-2]
        if end > key_buffer.shape[-2]:
            capacity = max(end + GROWTH_COLUMNS, 2 * key_buffer.shape[-2])
            key_buffer, value_buffer = _regrown(keys, capacity), _regrown(values, capacity)
        key_buffer[:, :, length:end] = key_states
        value_buffer[:, :, length:end] = value_states
        self._key_buffer, self._value_buffer = key_buffer, value_buffer
        self.keys, self.values = key_buffer[:, :, :end], value_buffer[:, :, :end]
        return self.keys, self.values


def _shares_storage(view: Tensor, buffer: Tensor) -> bool:
    return view.untyped_storage().data_ptr() == buffer.untyped_storage().data_ptr()


def _regrown(filled: Tensor, capacity: int) -> Tensor:
    """A buffer of ``capacity`` columns starting with ``filled``'s."""
    grown = filled.new_empty((*filled.shape[:2], capacity, filled.shape[3]))
    grown[:, :, : filled.shape[-2]] = filled
    return grown


class GrowingCache(Cache):
    """A transformers cache of `GrowingLayer`s, one per decoder layer, made on first use."""

    def __init__(self) -> None:
        super().__init__(layer_class_to_replicate=GrowingLayer)


def batch_cache(prefixes: Sequence[tuple[KVEntry | None, int]]) -> tuple[Cache, int]:
    """A model cache holding each row's reused prefix, right-aligned (left-padded).

    Row `i` reuses the first `n_i` positions of its entry; its keys/values occupy the
    last `n_i` of `width = max(n_i)` columns and the padding columns are zeros (they are
    masked out). Returns the cache and `width`.
    """
    width = max((n for _, n in prefixes), default=0)
    cache = GrowingCache()
    template = next((entry for entry, n in prefixes if entry is not None and n > 0), None)
    if template is None:
        return cache, 0
    for layer, (k0, v0) in enumerate(template.layers):
        keys = k0.new_zeros((len(prefixes), k0.shape[0], width, k0.shape[2]))
        values = v0.new_zeros((len(prefixes), v0.shape[0], width, v0.shape[2]))
        for row, (entry, n) in enumerate(prefixes):
            if entry is not None and n > 0:
                k, v = entry.layers[layer]
                keys[row, :, width - n :] = k[:, :n]
                values[row, :, width - n :] = v[:, :n]
        cache.update(keys, values, layer)
    return cache, width


def _layer_tensors(cache: Any) -> list[LayerKV]:
    """Per-layer (keys, values) of a transformers cache, across cache API versions."""
    layers = getattr(cache, "layers", None)
    if layers is not None:
        return [(layer.keys, layer.values) for layer in layers]
    return list(zip(cache.key_cache, cache.value_cache, strict=True))


def extract_row(cache: Any, row: int, columns: Tensor) -> tuple[LayerKV, ...]:
    """Copy one row's keys/values at `columns` (its unmasked positions) out of a batch."""
    return tuple(
        (k[row].index_select(1, columns), v[row].index_select(1, columns))
        for k, v in _layer_tensors(cache)
    )


def as_token_tensor(tokens: Sequence[int]) -> Tensor:
    """Token ids as the 1-D CPU int64 tensor `KVEntry` and `PrefixCache` use."""
    return torch.tensor(list(tokens), dtype=torch.long)
