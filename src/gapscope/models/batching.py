"""Dynamic batching of blocking calls from many threads onto one worker function.

Inspect runs samples concurrently and each awaits its own generate call; the model can
serve several of them in one forward pass. Callers hand their request to `submit`
(from a worker thread); whoever holds the run lock takes up to `batch_size` waiting
requests, oldest first, and runs them together. Requests arriving while a batch runs
queue up and form the next batch, so batches grow exactly when there is contention.
No event loop is involved, so this works under asyncio, trio or plain threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar, cast

RequestT = TypeVar("RequestT")
ResultT = TypeVar("ResultT")


@dataclass
class _Job(Generic[RequestT, ResultT]):
    request: RequestT
    result: ResultT | None = None
    error: BaseException | None = None
    done: threading.Event = field(default_factory=threading.Event)


class BatchQueue(Generic[RequestT, ResultT]):
    """Serialises `run_batch` and feeds it batches of concurrently submitted requests."""

    def __init__(
        self, run_batch: Callable[[Sequence[RequestT]], list[ResultT]], batch_size: int
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self._run_batch = run_batch
        self.batch_size = batch_size
        self._pending: list[_Job[RequestT, ResultT]] = []
        self._pending_lock = threading.Lock()
        self._run_lock = threading.Lock()

    def submit(self, request: RequestT) -> ResultT:
        """Run `request` (possibly batched with others) and return its result; blocks."""
        job: _Job[RequestT, ResultT] = _Job(request)
        with self._pending_lock:
            self._pending.append(job)
        while not job.done.is_set():
            with self._run_lock:
                if job.done.is_set():
                    break
                with self._pending_lock:
                    batch = self._pending[: self.batch_size]
                    del self._pending[: self.batch_size]
                self._run(batch)
        if job.error is not None:
            raise job.error
        return cast(ResultT, job.result)

    def _run(self, batch: list[_Job[RequestT, ResultT]]) -> None:
        try:
            results = self._run_batch([job.request for job in batch])
            for job, result in zip(batch, results, strict=True):
                job.result = result
        except BaseException as error:
            for job in batch:
                job.error = error
        finally:
            for job in batch:
                job.done.set()
