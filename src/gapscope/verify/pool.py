"""A warm, killable process pool with a wall-clock deadline per task.

``concurrent.futures.ProcessPoolExecutor`` cannot cancel a running task, so a task past its
deadline is handled by killing the pool's processes and starting a fresh, warmed pool; the other
tasks that were in flight are resubmitted. Only as many tasks as there are workers are in flight
at once, so a task's deadline starts when it starts running, not while it waits in a queue. The
pool uses the ``spawn`` start method: safe with threads in the parent, same on every platform.
"""

from __future__ import annotations

import multiprocessing
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Generic, TypeVar

from gapscope.verify import worker

R = TypeVar("R")
_WARM_TIMEOUT_S = 120.0


class TaskPool(Generic[R]):
    """Runs ``fn(*args)`` for many argument tuples with a per-task deadline."""

    def __init__(self, fn: Callable[..., R], workers: int, memory_mb: int | None) -> None:
        self._fn = fn
        self._workers = max(1, workers)
        self._memory_mb = memory_mb
        self._executor: ProcessPoolExecutor | None = None
        self.recycles = 0

    def _start(self) -> ProcessPoolExecutor:
        if self._executor is None:
            executor = ProcessPoolExecutor(
                max_workers=self._workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=worker.init_worker,
                initargs=(self._memory_mb,),
            )
            warm = [executor.submit(worker.ready) for _ in range(self._workers)]
            wait(warm, timeout=_WARM_TIMEOUT_S)
            self._executor = executor
        return self._executor

    def warm(self) -> None:
        """Start the workers now rather than on the first task."""
        self._start()

    def _kill(self) -> None:
        """Kill every worker of the current pool and forget it."""
        executor, self._executor = self._executor, None
        if executor is None:
            return
        processes: dict[int, Any] = dict(getattr(executor, "_processes", None) or {})
        for process in processes.values():
            process.kill()
        executor.shutdown(wait=False, cancel_futures=True)
        for process in processes.values():
            process.join(timeout=5)
        self.recycles += 1

    def run(self, tasks: Sequence[tuple[Any, ...]], timeout_s: float, on_timeout: R) -> list[R]:
        """Results in task order; ``on_timeout`` for tasks past the deadline or that crash."""
        results: dict[int, R] = {}
        pending: deque[int] = deque(range(len(tasks)))
        crashes: dict[int, int] = {}
        inflight: dict[Future[R], tuple[int, float]] = {}
        while pending or inflight:
            executor = self._start()
            try:
                while pending and len(inflight) < self._workers:
                    if pending[0] in crashes and inflight:
                        break
                    idx = pending[0]
                    future = executor.submit(self._fn, *tasks[idx])
                    inflight[future] = (pending.popleft(), time.monotonic() + timeout_s)
                    if idx in crashes:
                        break  # a suspect of a crash reruns alone, so the culprit is known
            except BrokenProcessPool:
                self._requeue(inflight, pending)
                self._kill()
                continue
            now = time.monotonic()
            horizon = min(deadline for _, deadline in inflight.values()) - now
            done, _ = wait(list(inflight), timeout=max(horizon, 0.0), return_when=FIRST_COMPLETED)
            broken = False
            for future in done:
                idx, _ = inflight.pop(future)
                try:
                    results[idx] = future.result()
                except BrokenProcessPool:
                    crashes[idx] = crashes.get(idx, 0) + 1
                    broken = True
                    if crashes[idx] >= 2:
                        results[idx] = on_timeout
                    else:
                        pending.appendleft(idx)
            now = time.monotonic()
            expired = [f for f, (_, deadline) in inflight.items() if deadline <= now]
            for future in expired:
                results[inflight.pop(future)[0]] = on_timeout
            if expired or broken:
                self._requeue(inflight, pending)
                self._kill()
        return [results[i] for i in range(len(tasks))]

    @staticmethod
    def _requeue(inflight: dict[Future[R], tuple[int, float]], pending: deque[int]) -> None:
        for idx, _ in sorted(inflight.values(), reverse=True):
            pending.appendleft(idx)
        inflight.clear()

    def close(self) -> None:
        """Stop the workers; the pool restarts on the next ``run``."""
        executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)
