"""Two models in one process take turns on the CPU: a running batch takes no more requests in
while another engine waits, and the waiting engine computes next (arrival order)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from gapscope.models import engine as engine_module
from gapscope.models.compute_turns import ComputeTurns
from gapscope.models.engine import Engine, EngineConfig, GenerationRequest, SamplingParams
from tests.models.conftest import wait_until
from tests.models.test_continuous_batching import LONG, request


def test_turns_go_in_arrival_order_and_the_holder_sees_waiters() -> None:
    turns = ComputeTurns()
    order: list[int] = []
    with ThreadPoolExecutor(max_workers=3) as pool:
        with turns:
            assert not turns.contended
            futures = []
            for number in range(3):

                def take(number: int = number) -> None:
                    with turns:
                        order.append(number)

                futures.append(pool.submit(take))
                wait_until(lambda count=number + 1: len(turns._waiting) == count)  # type: ignore[misc]
            assert turns.contended
        for future in futures:
            future.result(timeout=10)
    assert order == [0, 1, 2]
    assert not turns.contended


def test_an_interrupted_waiter_gives_its_turn_up() -> None:
    turns = ComputeTurns()
    entered = threading.Event()

    class Interrupted(Exception):
        pass

    def wait_then_fail(predicate: Any, timeout: float | None = None) -> bool:
        raise Interrupted

    with turns:
        original = turns._state.wait_for
        turns._state.wait_for = wait_then_fail  # type: ignore[method-assign]
        try:
            with turns:
                pass
        except Interrupted:
            entered.set()
        turns._state.wait_for = original  # type: ignore[method-assign]
        assert entered.is_set() and not turns.contended
    with turns:  # nobody is left holding a ticket in front
        pass


def test_a_batch_takes_no_request_in_while_another_engine_waits(tiny_checkpoint: Path) -> None:
    """Engine A decodes a long request; engine B (another model, same process) submits and waits
    for the CPU; a request A gets after that does not join A's batch: B's reply comes first, and
    the late request runs in A's next batch, alone."""
    config = EngineConfig()
    first = Engine.from_pretrained(tiny_checkpoint, device="cpu", config=config)
    second = Engine.from_pretrained(tiny_checkpoint, device="cpu", config=config)
    assert first._lock is second._lock is engine_module._CPU_COMPUTE
    finished: list[str] = []
    rows_of_first: list[int] = []
    passes: list[str] = []  # which engine ran each forward pass, in order
    go_on = threading.Event()

    def on_pass(module: Any, args: Any, output: Any) -> None:
        passes.append("first")
        rows_of_first.append(output.logits.shape[0])
        if len(rows_of_first) == 5:
            go_on.wait(timeout=30)

    def run(engine: Engine, item: GenerationRequest, name: str) -> list[int]:
        tokens = list(engine.submit(item).tokens)
        finished.append(name)
        return tokens

    handle = first.model.register_forward_hook(on_pass)
    other_handle = second.model.register_forward_hook(lambda *_: passes.append("second"))
    late = request("w5 w6", max_tokens=3)
    try:
        with ThreadPoolExecutor(max_workers=3) as pool:
            long = pool.submit(run, first, LONG, "long")
            wait_until(lambda: len(rows_of_first) == 5)
            other = pool.submit(run, second, request("w7 w8", max_tokens=3), "other model")
            wait_until(lambda: engine_module._CPU_COMPUTE.contended)
            joiner = pool.submit(run, first, late, "late")
            wait_until(lambda: len(first._queue._pending) == 1)
            go_on.set()
            for future in (long, other, joiner):
                future.result(timeout=120)
    finally:
        handle.remove()
        other_handle.remove()
    # the long batch ran to its end, then the other model's, then the late request's: the
    # callers' own order of return is up to the thread scheduler (the long caller and the
    # other model's batch start at the same moment)
    runs = [name for i, name in enumerate(passes) if i == 0 or passes[i - 1] != name]
    assert runs == ["first", "second", "first"]
    assert finished.index("other model") < finished.index("late")
    assert max(rows_of_first) == 1  # the late request never shared the long one's batch
    alone = Engine.from_pretrained(tiny_checkpoint, device="cpu", config=config)
    params = SamplingParams(max_tokens=3, ignore_eos=True)
    expected = alone.generate([GenerationRequest(late.messages, params)])[0].tokens
    assert tuple(joiner.result()) == expected
