"""The KV prefix cache's keys/values kept in files instead of memory.

A cached entry is read only when a later request reuses it (its prefix is copied into that
batch's cache) and otherwise sits idle, so in memory it was resident set for nothing: up to
the cache's byte bound (256 MB a model), two models in ``make demo``. Written to a file it is
page cache, which no process's resident set counts and which the kernel reclaims under
pressure, so the bound can be larger (`gapscope.models.engine.SPILLED_CACHE_BYTES`). A
lookup maps the file (a private mapping: pages are read when touched, so only the columns a
batch copies are read) and the mapping ends with the last tensor viewing it. The bytes read
back are the bytes written, so a reuse computes exactly what it did in memory.

Each entry's file has no name (`tempfile.TemporaryFile`: ``O_TMPFILE`` on Linux, elsewhere a
file unlinked as soon as it is created) and lives in tempfile's directory, so ``TMPDIR`` puts
it on another disk. Only open descriptors keep its blocks: its `SpilledLayers`' own, closed
when the cache drops the entry, and each live mapping's. However the process ends, a SIGKILL
or the OOM killer included, the kernel closes them and frees the space: there is no directory
and no file to clean up. The price is a descriptor an entry (16 a model by default).
"""

from __future__ import annotations

import mmap
import os
import tempfile
import weakref
from collections.abc import Sequence

import torch
from torch import Tensor

LayerKV = tuple[Tensor, Tensor]
"""Keys and values of one layer for one sequence, each `[kv_heads, seq_len, head_dim]`."""


class SpilledLayers:
    """One entry's per-layer keys/values (all of one dtype, in host memory) written to one
    unnamed file, each tensor's bytes in turn."""

    def __init__(self, layers: Sequence[LayerKV]) -> None:
        dtypes = {tensor.dtype for pair in layers for tensor in pair}
        if len(dtypes) != 1:
            raise ValueError(
                f"a spilled entry's layers share one dtype, got {sorted(map(str, dtypes))}"
            )
        with tempfile.TemporaryFile() as file:
            for pair in layers:
                for tensor in pair:
                    # one layer's keys (or values) at a time: a few MB, copied only if a view
                    file.write(tensor.contiguous().reshape(-1).view(torch.uint8).numpy().data)
            file.flush()
            self._fd = os.dup(file.fileno())  # the file object closes its own descriptor
        self._close = weakref.finalize(self, os.close, self._fd)
        self.dtype = dtypes.pop()
        self.shapes = tuple((k.shape, v.shape) for k, v in layers)
        self.nbytes = sum(k.nbytes + v.nbytes for k, v in layers)

    def load(self) -> tuple[LayerKV, ...]:
        """The layers as tensors viewing a private mapping of the file (read as touched).

        The mapping is copy-on-write, so a write to a tensor never reaches the file and the next
        load still reads the bytes written. It holds its own descriptor and lives as long as any
        tensor views it, so the tensors stay readable after the entry is closed."""
        if not self._close.alive:
            raise ValueError("the spilled entry was closed")
        mapping = mmap.mmap(self._fd, self.nbytes, access=mmap.ACCESS_COPY)
        flat = torch.frombuffer(mapping, dtype=torch.uint8)  # holds `mapping` while it lives
        layers, offset = [], 0
        for shapes in self.shapes:
            pair = []
            for shape in shapes:
                size = shape.numel() * self.dtype.itemsize
                pair.append(flat[offset : offset + size].view(self.dtype).view(shape))
                offset += size
            layers.append((pair[0], pair[1]))
        return tuple(layers)

    def close(self) -> None:
        """Close the file: its disk space is given back once no mapping of it is left either.

        Also done when the object is collected, so a cache that goes leaves nothing open."""
        self._close()
