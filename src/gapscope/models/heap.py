"""Give freed heap memory back to the operating system.

glibc keeps memory that Python and torch free in its arenas (one per thread that allocated:
Inspect's worker threads each get one) and returns it to the system only when the top of an
arena is free. A GGUF conversion, a model load or a batch with long prompts leaves hundreds of
MB freed but still resident, which counted in the demo's 10 GB peak. ``malloc_trim(0)`` walks
every arena and releases their free pages; it does not move live data, so nothing computed
changes. Elsewhere than glibc (macOS, musl) there is no such call and this does nothing.
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
