"""`BatchQueue` groups requests that arrive while a batch is running."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import pytest

from gapscope.models.batching import BatchQueue


def test_requests_waiting_during_a_batch_form_the_next_batch() -> None:
    batches: list[list[int]] = []
    release = threading.Event()

    def run(batch: Sequence[int]) -> list[int]:
        batches.append(list(batch))
        if len(batches) == 1:
            release.wait(timeout=10)
        return [item * 10 for item in batch]

    queue: BatchQueue[int, int] = BatchQueue(run, batch_size=3)
    results: dict[int, int] = {}

    def submit(item: int) -> None:
        results[item] = queue.submit(item)

    first = threading.Thread(target=submit, args=(0,))
    first.start()
    while not batches:
        threading.Event().wait(0.001)
    others = [threading.Thread(target=submit, args=(i,)) for i in range(1, 6)]
    for thread in others:
        thread.start()
    while len(queue._pending) < 5:
        threading.Event().wait(0.001)
    release.set()
    for thread in [first, *others]:
        thread.join(timeout=10)
    assert results == {i: i * 10 for i in range(6)}
    assert batches[0] == [0]
    assert [len(batch) for batch in batches[1:]] == [3, 2]
    assert sorted(item for batch in batches for item in batch) == list(range(6))


def test_errors_reach_every_request_of_the_batch() -> None:
    def run(batch: Sequence[int]) -> list[int]:
        raise ValueError("boom")

    queue: BatchQueue[int, int] = BatchQueue(run, batch_size=2)
    with pytest.raises(ValueError, match="boom"):
        queue.submit(1)


def test_batch_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="batch_size"):
        BatchQueue(lambda batch: list(batch), batch_size=0)
