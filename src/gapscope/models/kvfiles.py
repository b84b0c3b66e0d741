"""The KV prefix cache's keys/values kept in files instead of memory.

A cached entry is read only when a later request reuses it (its prefix is copied into that
batch's cache) and otherwise sits idle, so in memory it was resident set for nothing: up to
the cache's byte bound (256 MB a model), two models in ``make demo``. Written to a file it is
page cache, which no process's resident set counts and which the kernel reclaims under
pressure, so the bound can be larger (`gapscope.models.engine.SPILLED_CACHE_BYTES`). A
lookup maps the file (``torch.from_file``, a private mapping: pages are read when touched, so
only the columns a batch copies are read) and the mapping ends with the last tensor viewing it.
The bytes read back are the bytes written, so a reuse computes exactly what it did in memory.

The files live in a private temporary directory per cache, deleted when the cache is garbage
collected or the process exits.
"""

from __future__ import annotations

import shutil
import tempfile
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor

LayerKV = tuple[Tensor, Tensor]
"""Keys and values of one layer for one sequence, each `[kv_heads, seq_len, head_dim]`."""


@dataclass(frozen=True)
class SpilledLayers:
    """One entry's per-layer keys/values, in one file: each tensor's bytes in turn."""

    path: Path
    dtype: torch.dtype
    shapes: tuple[tuple[torch.Size, torch.Size], ...]
    nbytes: int

    def load(self) -> tuple[LayerKV, ...]:
        """The layers as tensors viewing a private mapping of the file (read as touched)."""
        flat = torch.from_file(str(self.path), shared=False, size=self.nbytes, dtype=torch.uint8)
        layers, offset = [], 0
        for shapes in self.shapes:
            pair = []
            for shape in shapes:
                size = shape.numel() * self.dtype.itemsize
                pair.append(flat[offset : offset + size].view(self.dtype).view(shape))
                offset += size
            layers.append((pair[0], pair[1]))
        return tuple(layers)

    def delete(self) -> None:
        """Remove the file (a mapping still open keeps reading it: Linux unlinks lazily)."""
        self.path.unlink(missing_ok=True)


class SpillDirectory:
    """A private temporary directory holding one cache's entries, one file each."""

    def __init__(self) -> None:
        self.path = Path(tempfile.mkdtemp(prefix="gapscope-kv-"))
        self._cleanup = weakref.finalize(self, shutil.rmtree, self.path, ignore_errors=True)

    def write(self, key: int, layers: Sequence[LayerKV]) -> SpilledLayers:
        """Write ``layers`` (all of one dtype, in host memory) to the file of ``key``."""
        dtypes = {tensor.dtype for pair in layers for tensor in pair}
        if len(dtypes) != 1:
            raise ValueError(
                f"a spilled entry's layers share one dtype, got {sorted(map(str, dtypes))}"
            )
        path = self.path / f"{key}.kv"
        nbytes = 0
        with path.open("wb") as out:
            for pair in layers:
                for tensor in pair:
                    # one layer's keys (or values) at a time: a few MB, copied only if a view
                    out.write(tensor.contiguous().reshape(-1).view(torch.uint8).numpy().data)
                    nbytes += tensor.nbytes
        shapes = tuple((k.shape, v.shape) for k, v in layers)
        return SpilledLayers(path, dtypes.pop(), shapes, nbytes)
