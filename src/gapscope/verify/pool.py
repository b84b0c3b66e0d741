"""Warm worker processes, each killable on its own, with a wall-clock deadline per task.

Each worker is a ``spawn``-ed process (safe with threads in the parent, same on every platform)
that imports the heavy libraries once and then serves one task at a time over a pipe. A task's
deadline starts when its worker receives it, not while it waits in the queue or while a fresh
worker is still importing. A task past its deadline costs exactly one worker: that process is
killed and a replacement starts warming in the background, while the other workers keep
going. (``ProcessPoolExecutor`` cannot kill one task, so a timeout there meant restarting the
whole pool and requeueing everyone's work: 757 s instead of 16 s on a run with 5 % hard cases.)
A worker that dies mid-task (segfault, memory cap) is handled the same way.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from multiprocessing.connection import wait
from typing import Any, Generic, TypeVar

from gapscope.verify import worker

R = TypeVar("R")
_READY = "ready"
_JOIN_S = 5.0
_MAX_FAILED_STARTS = 3


class _Worker:
    """One process, its pipe, and the task it is running (with its deadline)."""

    def __init__(self, memory_mb: int | None) -> None:
        context = multiprocessing.get_context("spawn")
        self.conn, child = context.Pipe()
        self.process = context.Process(
            target=worker.serve, args=(child, memory_mb), daemon=True, name="gapscope-verify"
        )
        self.process.start()
        child.close()
        self.ready = False
        self.task: int | None = None
        self.deadline = 0.0

    def send(self, idx: int, args: tuple[Any, ...], timeout_s: float) -> None:
        self.conn.send(args)
        self.task, self.deadline = idx, time.monotonic() + timeout_s

    def kill(self) -> None:
        self.process.kill()
        self.process.join(_JOIN_S)
        self.conn.close()

    def stop(self) -> None:
        """Ask the worker to exit after its current task; kill it if it does not."""
        with contextlib.suppress(OSError):  # already gone: nothing to ask
            self.conn.send(None)
        self.process.join(_JOIN_S)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(_JOIN_S)
        self.conn.close()


class TaskPool(Generic[R]):
    """Runs ``fn(*args)`` in ``workers`` processes, started on first need, with deadlines.

    ``fn`` must be a module-level function (it is sent by name); results must be picklable.
    """

    def __init__(self, fn: Callable[..., R], workers: int, memory_mb: int | None) -> None:
        self._fn = fn
        self._size = max(1, workers)
        self._memory_mb = memory_mb
        self._workers: list[_Worker] = []
        self._queue: deque[tuple[int, tuple[Any, ...]]] = deque()
        self._next_ticket = 0
        self._failed_starts = 0
        self.recycles = 0

    @property
    def started(self) -> bool:
        """Whether any worker process exists (the pool starts only when a task needs it)."""
        return bool(self._workers)

    def _fill(self) -> None:
        while len(self._workers) < self._size:
            self._workers.append(_Worker(self._memory_mb))

    def warm(self, timeout_s: float = 120.0) -> None:
        """Start the workers now and wait until they have imported their libraries."""
        self._fill()
        deadline = time.monotonic() + timeout_s
        while not all(w.ready for w in self._workers) and time.monotonic() < deadline:
            self._poll(deadline - time.monotonic(), lambda *_: None, lambda _: None)

    def _replace(self, dead: _Worker) -> None:
        dead.kill()
        self._failed_starts = 0 if dead.ready else self._failed_starts + 1
        if self._failed_starts > _MAX_FAILED_STARTS:
            self.close()
            raise RuntimeError(
                f"verifier workers die while starting (exit code {dead.process.exitcode}); "
                "run `python -c 'import math_verify, sympy'` to see why"
            )
        self._workers[self._workers.index(dead)] = _Worker(self._memory_mb)
        self.recycles += 1

    def _poll(
        self,
        timeout: float,
        on_result: Callable[[int, Any], None],
        on_lost: Callable[[int], None],
    ) -> None:
        """Wait up to ``timeout`` for messages; deliver results, replace dead or late workers."""
        by_conn = {w.conn: w for w in self._workers}
        by_sentinel = {w.process.sentinel: w for w in self._workers}
        ready = wait([*by_conn, *by_sentinel], timeout=max(timeout, 0.0))
        lost: list[_Worker] = []
        for handle in ready:
            w = by_conn.get(handle)  # type: ignore[call-overload]
            if w is None:
                w = by_sentinel[handle]  # type: ignore[index]
                if w not in lost and not w.conn.poll():
                    lost.append(w)
                continue
            try:
                message = w.conn.recv()
            except (EOFError, OSError):
                if w not in lost:
                    lost.append(w)
                continue
            if message == _READY:
                w.ready = True
            elif w.task is not None:
                # ``(True, result)``, or ``(False, None)`` when the task raised: the worker
                # survives, the task is lost. A bare None would be ambiguous: ``fn`` may
                # return None as a real answer (the leak check's "no transform").
                idx, w.task = w.task, None
                succeeded, result = message
                if succeeded:
                    on_result(idx, result)
                else:
                    on_lost(idx)
        now = time.monotonic()
        lost += [w for w in self._workers if w.task is not None and w.deadline <= now]
        for w in dict.fromkeys(lost):
            if w.task is not None:
                on_lost(w.task)
            self._replace(w)

    def submit(self, args: tuple[Any, ...]) -> int:
        """Queue ``fn(*args)``; the returned ticket identifies its result in ``collect``."""
        self._fill()
        ticket = self._next_ticket
        self._next_ticket += 1
        self._queue.append((ticket, args))
        return ticket

    def _dispatch(self, timeout_s: float) -> None:
        for w in self._workers:
            if self._queue and w.ready and w.task is None:
                ticket, args = self._queue.popleft()
                w.send(ticket, (self._fn, args), timeout_s)

    def collect(self, timeout_s: float, on_timeout: R, wait_s: float | None) -> list[tuple[int, R]]:
        """Run queued tasks (deadline ``timeout_s`` each) and return the finished ones.

        Waits up to ``wait_s`` seconds, or until at least one task finishes when None.
        ``on_timeout`` stands for the result of a task that ran late or crashed its worker.
        """
        finished: list[tuple[int, R]] = []
        while True:
            self._dispatch(timeout_s)
            busy = [w.deadline for w in self._workers if w.task is not None]
            if not busy and not self._queue:
                return finished
            horizon = min(busy) - time.monotonic() if busy else timeout_s
            self._poll(
                horizon if wait_s is None else min(horizon, wait_s),
                lambda ticket, result: finished.append((ticket, result)),
                lambda ticket: finished.append((ticket, on_timeout)),
            )
            if finished or wait_s is not None:
                self._dispatch(timeout_s)  # keep every worker busy while the caller works
                return finished

    def cancel(self) -> None:
        """Forget queued tasks and kill workers still running one (their caller gave up)."""
        self._queue.clear()
        for w in [w for w in self._workers if w.task is not None]:
            w.kill()
            self._workers.remove(w)

    def imap(
        self, tasks: Sequence[tuple[Any, ...]], timeout_s: float, on_timeout: R
    ) -> Iterator[tuple[int, R]]:
        """(index, result) pairs as tasks finish; ``on_timeout`` for late or crashed tasks."""
        index = {self.submit(args): i for i, args in enumerate(tasks)}
        try:
            while index:
                for ticket, result in self.collect(timeout_s, on_timeout, None):
                    yield index.pop(ticket), result
        finally:
            if index:
                self.cancel()

    def run(self, tasks: Sequence[tuple[Any, ...]], timeout_s: float, on_timeout: R) -> list[R]:
        """Results in task order."""
        results = dict(self.imap(tasks, timeout_s, on_timeout))
        return [results[i] for i in range(len(tasks))]

    def close(self) -> None:
        """Stop every worker; the pool starts again on the next task."""
        self._queue.clear()
        workers, self._workers = self._workers, []
        for w in workers:
            if w.task is not None or not w.ready:
                w.kill()
            else:
                w.stop()
