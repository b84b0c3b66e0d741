"""`BatchQueue` groups requests that arrive while a batch is running, answers each caller as
soon as its result is delivered, and lets a running batch take waiting requests in."""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from gapscope.models.batching import Batch, BatchQueue
from tests.models.conftest import wait_until


def submit_in_order(
    pool: ThreadPoolExecutor, queue: BatchQueue[int, int], items: list[int]
) -> dict[int, Future[int]]:
    """Submit ``items`` from pool threads, each waiting in the queue before the next comes."""
    futures: dict[int, Future[int]] = {}
    for item in items:
        waiting = len(queue._pending)
        futures[item] = pool.submit(queue.submit, item)
        wait_until(lambda waiting=waiting: len(queue._pending) > waiting)  # type: ignore[misc]
    return futures


def deliver_all(batch: Batch[int, int]) -> None:
    for index, item in enumerate(batch.requests):
        batch.deliver(index, item * 10)


def test_requests_waiting_during_a_batch_form_the_next_batch() -> None:
    batches: list[list[int]] = []
    release = threading.Event()

    def run(batch: Batch[int, int]) -> None:
        batches.append(list(batch.requests))
        if len(batches) == 1:
            release.wait(timeout=10)
        deliver_all(batch)

    queue: BatchQueue[int, int] = BatchQueue(run, batch_size=3)
    with ThreadPoolExecutor(max_workers=6) as pool:
        first = pool.submit(queue.submit, 0)
        wait_until(lambda: batches)
        others = submit_in_order(pool, queue, [1, 2, 3, 4, 5])
        release.set()
        results = {i: f.result(timeout=10) for i, f in {0: first, **others}.items()}
    assert results == {i: i * 10 for i in range(6)}
    assert batches == [[0], [1, 2, 3], [4, 5]]


def test_a_delivered_caller_returns_while_its_batch_still_runs() -> None:
    finish = threading.Event()

    def run(batch: Batch[int, int]) -> None:
        batch.deliver(0, 10)
        finish.wait(timeout=10)  # the batch goes on after answering

    queue: BatchQueue[int, int] = BatchQueue(run, batch_size=1)
    assert queue.submit(1) == 10
    assert queue._working and not finish.is_set()
    finish.set()


def test_a_running_batch_takes_waiting_requests_oldest_first_while_they_fit() -> None:
    batches: list[list[int]] = []
    others_wait = threading.Event()

    def run(batch: Batch[int, int]) -> None:
        if batch.requests == [0]:
            others_wait.wait(timeout=10)
            joined = batch.join(lambda item: item % 2 == 1, limit=5)
            assert joined == [(1, 1), (2, 3)]  # 4 does not fit, so 5 may not overtake it
        batches.append(list(batch.requests))
        deliver_all(batch)

    queue: BatchQueue[int, int] = BatchQueue(run, batch_size=2)
    with ThreadPoolExecutor(max_workers=5) as pool:
        first = pool.submit(queue.submit, 0)
        wait_until(lambda: queue._working and not queue._pending)
        others = submit_in_order(pool, queue, [1, 3, 4, 5])
        others_wait.set()
        results = {i: f.result(timeout=10) for i, f in {0: first, **others}.items()}
    assert results == {i: i * 10 for i in (0, 1, 3, 4, 5)}
    assert batches == [[0, 1, 3], [4, 5]]


def test_an_error_fails_every_request_of_the_batch_joiners_too_and_the_next_batch_runs() -> None:
    others_wait = threading.Event()

    def run(batch: Batch[int, int]) -> None:
        if batch.requests == [0]:
            others_wait.wait(timeout=10)
            batch.join(lambda item: item == 1, limit=1)
            raise ValueError("boom")
        deliver_all(batch)

    queue: BatchQueue[int, int] = BatchQueue(run, batch_size=2)
    with ThreadPoolExecutor(max_workers=3) as pool:
        first = pool.submit(queue.submit, 0)
        wait_until(lambda: queue._working and not queue._pending)
        others = submit_in_order(pool, queue, [1, 2])
        others_wait.set()
        for future in (first, others[1]):
            with pytest.raises(ValueError, match="boom"):
                future.result(timeout=10)
        assert others[2].result(timeout=10) == 20


def test_a_request_the_run_never_answers_fails_instead_of_hanging() -> None:
    queue: BatchQueue[int, int] = BatchQueue(lambda batch: None, batch_size=2)
    with pytest.raises(RuntimeError, match="without answering"):
        queue.submit(1)


def test_batch_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="batch_size"):
        BatchQueue(lambda batch: None, batch_size=0)
