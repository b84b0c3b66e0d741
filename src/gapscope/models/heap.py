"""Give freed heap memory back to the operating system.

glibc keeps memory that Python and torch free in its arenas (one per thread that allocated:
Inspect's worker threads each get one) and returns it to the system only when the top of an
arena is free. A GGUF conversion, a model load or a batch with long prompts leaves hundreds of
MB freed but still resident, which counted in the demo's 10 GB peak. ``malloc_trim(0)`` walks
every arena and releases their free pages; it does not move live data, so nothing computed
changes. Elsewhere than glibc (macOS, musl) there is no such call and this does nothing.

``keep_heap_small`` goes further for a process that holds a model: glibc serves blocks under its
mmap threshold from the arenas, and it raises that threshold (up to 32 MB) each time a larger
mmapped block is freed, so a batch's keys/values (about 12 MB a layer for 8 rows of 2,000
SmolLM2 tokens) end up in arenas that fragment. A fixed ``MMAP_THRESHOLD`` maps every block of
4 MB or more on its own and unmaps it when torch frees it; ``ARENA_MAX`` caps the arenas
Inspect's many worker threads create. Both change where memory comes from, not any value.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
from typing import Any


@functools.cache
def _libc() -> Any:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    library = ctypes.CDLL(name)
    return library if hasattr(library, "malloc_trim") else None


M_ARENA_MAX = -8
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 4 << 20
ARENA_MAX = 4


@functools.cache
def keep_heap_small() -> bool:
    """Set glibc's mmap threshold and arena cap (once a process); True where it could."""
    library = _libc()
    if library is None or not hasattr(library, "mallopt"):
        return False
    library.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    library.mallopt(M_ARENA_MAX, ARENA_MAX)
    return True


def release_free_memory(collect: bool = False) -> bool:
    """Return the heap's free pages to the system (first collecting garbage cycles, with
    ``collect``: a model's modules hold cycles); True where it could. Tensors are freed by
    reference counting, so after a batch no collection is needed (a full one costs tens of ms
    in a process holding Inspect's logs)."""
    if collect:
        gc.collect()
    library = _libc()
    if library is None:
        return False
    library.malloc_trim(0)
    return True
