"""One lazily built, process-wide instance of something that owns worker processes.

The verifier's pool and the leak check's guarded worker are expensive to start and safe to
share across threads; they are built on first use (never at import), once, and closed when
the interpreter exits so no worker outlives it.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar


class Closeable(Protocol):
    def close(self) -> None: ...


T = TypeVar("T", bound=Closeable)


class ProcessShared(Generic[T]):
    """``get()`` builds the instance on the first call (thread-safe) and returns it after."""

    def __init__(self, build: Callable[[], T]) -> None:
        self._build = build
        self._instance: T | None = None
        self._lock = threading.Lock()

    def get(self) -> T:
        with self._lock:
            if self._instance is None:
                self._instance = self._build()
                atexit.register(self._instance.close)
            return self._instance
