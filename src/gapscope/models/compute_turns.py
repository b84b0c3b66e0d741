"""A lock taken in arrival order that tells its holder when someone waits for it.

The CPU engines of one process (``make demo`` runs SmolLM2 and Gemma 3) compute one at a time
(`gapscope.models.engine`), each holding the lock for a whole batch so that only one model's
batch buffers are resident. A running batch takes waiting requests in (continuous batching),
so under a plain lock one model's batch could run for as long as its own requests keep coming
and the other model's callers would wait for all of it (and a sample's time limit could end
them). With ``contended`` the holder stops taking requests in while another engine waits, lets
its batch finish and hands over; the turns go in arrival order (a plain ``threading.Lock``
gives no order), so the waiting engine runs next.
"""

from __future__ import annotations

import threading
from collections import deque
from types import TracebackType


class ComputeTurns:
    """A non-reentrant lock (``with turns:``) granted first come, first served."""

    def __init__(self) -> None:
        self._state = threading.Condition()
        self._waiting: deque[object] = deque()
        self._held = False

    def __enter__(self) -> None:
        ticket = object()
        with self._state:
            self._waiting.append(ticket)
            try:
                self._state.wait_for(lambda: not self._held and self._waiting[0] is ticket)
            except BaseException:  # interrupted while waiting: give the turn up, block no one
                self._waiting.remove(ticket)
                self._state.notify_all()
                raise
            self._waiting.popleft()
            self._held = True

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        with self._state:
            self._held = False
            self._state.notify_all()

    @property
    def contended(self) -> bool:
        """Whether someone is waiting for the lock (asked by its holder)."""
        with self._state:
            return bool(self._waiting)
