"""Continuous batching of blocking calls from many threads onto one worker.

Inspect runs samples concurrently and each awaits its own generate call; the model can
serve several of them in one forward pass. Callers hand their request to `submit` (from a
worker thread) and wait for their own result. One batch thread, started when work arrives and
gone when none is left, takes up to `batch_size` waiting requests, oldest first, and hands
them to `run_batch` as a `Batch`. The run delivers each request's result the moment it has
it (a short reply does not wait for the batch's longest), and between its steps it may take
more waiting requests in (`Batch.join`), so a request that arrives while a long batch runs
starts at the batch's next step instead of after its end. No event loop is involved, so this
works under asyncio, trio or plain threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar, cast

RequestT = TypeVar("RequestT")
ResultT = TypeVar("ResultT")


@dataclass
class _Job(Generic[RequestT, ResultT]):
    request: RequestT
    result: ResultT | None = None
    error: BaseException | None = None
    done: bool = False


class Batch(Generic[RequestT, ResultT]):
    """The requests one run serves. ``requests`` grows as the run takes waiting ones in; the
    run answers request ``i`` with ``deliver(i, result)``, which wakes its caller at once."""

    def __init__(self, queue: BatchQueue[RequestT, ResultT], jobs: list[_Job[RequestT, ResultT]]):
        self._queue = queue
        self._jobs = jobs

    @property
    def requests(self) -> list[RequestT]:
        return [job.request for job in self._jobs]

    def deliver(self, index: int, result: ResultT) -> None:
        self._queue._finish(self._jobs[index], result=result)

    def join(self, fits: Callable[[RequestT], bool], limit: int) -> list[tuple[int, RequestT]]:
        """Take in up to ``limit`` waiting requests, oldest first, while ``fits`` accepts them
        (the first it refuses stops the taking: no request is overtaken forever by later ones
        that fit); returns them with their indices in ``requests``."""
        taken = self._queue._take(fits, limit)
        first = len(self._jobs)
        self._jobs.extend(taken)
        return [(first + offset, job.request) for offset, job in enumerate(taken)]

    def _fail_unanswered(self, error: BaseException) -> None:
        for job in self._jobs:
            if not job.done:
                self._queue._finish(job, error=error)


class BatchQueue(Generic[RequestT, ResultT]):
    """Feeds `run_batch` batches of concurrently submitted requests, one batch at a time."""

    def __init__(
        self, run_batch: Callable[[Batch[RequestT, ResultT]], None], batch_size: int
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self._run_batch = run_batch
        self.batch_size = batch_size
        self._pending: list[_Job[RequestT, ResultT]] = []
        self._state = threading.Condition()
        self._working = False

    def submit(self, request: RequestT) -> ResultT:
        """Run `request` (possibly batched with others) and return its result; blocks."""
        job: _Job[RequestT, ResultT] = _Job(request)
        with self._state:
            self._pending.append(job)
            if not self._working:
                self._start_worker(job)
            self._state.wait_for(lambda: job.done)
        if job.error is not None:
            raise job.error
        return cast(ResultT, job.result)

    def _start_worker(self, job: _Job[RequestT, ResultT]) -> None:
        worker = threading.Thread(target=self._work, name="gapscope-batches", daemon=True)
        try:
            worker.start()
        except BaseException:
            self._pending.remove(job)
            raise
        self._working = True

    def _work(self) -> None:
        while True:
            with self._state:
                if not self._pending:
                    self._working = False
                    return
                jobs = self._pending[: self.batch_size]
                del self._pending[: self.batch_size]
            batch = Batch(self, jobs)
            try:
                self._run_batch(batch)
            except BaseException as error:  # every caller of the batch gets it, none hangs
                batch._fail_unanswered(error)
            else:
                batch._fail_unanswered(RuntimeError("the batch ended without answering"))

    def _take(self, fits: Callable[[RequestT], bool], limit: int) -> list[_Job[RequestT, ResultT]]:
        with self._state:
            count = 0
            while count < min(limit, len(self._pending)) and fits(self._pending[count].request):
                count += 1
            taken = self._pending[:count]
            del self._pending[:count]
        return taken

    def _finish(
        self,
        job: _Job[RequestT, ResultT],
        result: ResultT | None = None,
        error: BaseException | None = None,
    ) -> None:
        with self._state:
            job.result, job.error, job.done = result, error, True
            self._state.notify_all()
