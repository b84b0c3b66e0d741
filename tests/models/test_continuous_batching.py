"""Continuous batching: requests submitted while a batch decodes join it between two steps,
each caller gets its reply as soon as its row stops, and every row's tokens are the ones it
gets alone. Real threads on the tiny models; what happened is read off the model's forward
passes (how many rows each had), never off the clock."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
import torch

from gapscope.models.engine import (
    Engine,
    EngineConfig,
    GenerationRequest,
    GenerationResult,
    SamplingParams,
)
from gapscope.models.hooks import AddToOutput, forward_hooks
from tests.models.conftest import EngineFactory, wait_until
from tests.models.tiny import TINY_SLIDING_WINDOW

LONG = GenerationRequest(
    ({"role": "user", "content": "w1 w2 w3 w4"},), SamplingParams(max_tokens=200, ignore_eos=True)
)


def request(content: str, max_tokens: int = 6, **fields: Any) -> GenerationRequest:
    params = SamplingParams(max_tokens=max_tokens, ignore_eos=True)
    return GenerationRequest(({"role": "user", "content": content},), params, **fields)


def second_turn(
    engines: Sequence[Engine], first: GenerationRequest, user: str
) -> GenerationRequest:
    """``first`` answered by each of ``engines`` (so each caches its keys/values), then the
    conversation's next turn: the reply and ``user``'s words appended."""
    for engine in engines:
        reply = engine.generate([first])[0]
    return replace(
        first,
        messages=(
            *first.messages,
            {"role": "assistant", "content": reply.text},
            {"role": "user", "content": user},
        ),
    )


@dataclass
class Run:
    """Requests decoding in one batch, and others submitted while they do."""

    rows: list[int] = field(default_factory=list)
    """Rows of each forward pass of the model, in order."""
    returned_at: dict[int, int] = field(default_factory=dict)
    """Request (by its position in ``first + joiners``) -> forward passes made when its caller
    had its reply in hand; recorded for those whose row left the batch before the last pass."""


@contextmanager
def running(
    engine: Engine,
    first: Sequence[GenerationRequest],
    joiners: Sequence[GenerationRequest],
    at_pass: int = 5,
) -> Iterator[tuple[Run, list[Future[GenerationResult]], list[Future[GenerationResult]]]]:
    """Submit ``first`` (several: behind a one-token request, so they start as one batch); at
    the ``at_pass``-th forward pass submit ``joiners`` and hold the pass until all are queued.
    Whenever a pass has fewer rows than the one before (rows left the batch), hold it until
    every caller whose reply was delivered has returned, and record when: a caller who got its
    reply only at the batch's end would block that pass (the wait fails the test). Yields the
    run and the futures of both; exits when all are done."""
    run = Run()
    everyone = [*first, *joiners]
    pool = ThreadPoolExecutor(max_workers=len(everyone) + 1)
    futures: list[Future[GenerationResult]] = []
    delivered = [threading.Event() for _ in everyone]
    deliver = engine._queue._finish

    def finish(job: Any, **outcome: Any) -> None:
        deliver(job, **outcome)
        for index, item in enumerate(everyone):
            if job.request is item:
                delivered[index].set()

    def submit_queued(requests: Sequence[GenerationRequest]) -> None:
        for item in requests:
            waiting = len(engine._queue._pending)
            futures.append(pool.submit(engine.submit, item))
            wait_until(lambda waiting=waiting: len(engine._queue._pending) > waiting)  # type: ignore[misc]

    def on_pass(module: Any, args: Any, output: Any) -> None:
        rows = output.logits.shape[0]
        if run.rows and rows < run.rows[-1]:
            for index, future in enumerate(futures):
                if delivered[index].is_set() and index not in run.returned_at:
                    future.result(timeout=10)
                    run.returned_at[index] = len(run.rows)
        run.rows.append(rows)
        if len(run.rows) == 1 and len(first) > 1:
            submit_queued(first)
        if len(run.rows) == at_pass:
            submit_queued(joiners)

    engine._queue._finish = finish  # type: ignore[method-assign]
    handle = engine.model.register_forward_hook(on_pass)
    try:
        with pool:
            if len(first) == 1:
                futures.append(pool.submit(engine.submit, first[0]))
            else:
                pool.submit(engine.submit, request("w9", max_tokens=1))
                wait_until(lambda: len(futures) == len(first))
            wait_until(lambda: len(futures) == len(everyone))
            yield run, futures[: len(first)], futures[len(first) :]
            for future in futures:
                future.result(timeout=60)
    finally:
        handle.remove()
        engine._queue._finish = deliver  # type: ignore[method-assign]


def alone(engine: Engine, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
    """Each request run by itself, in order, on ``engine``."""
    return [engine.generate([item])[0] for item in requests]


def test_a_short_request_joins_a_long_batch_and_returns_before_it_ends(
    make_engine: EngineFactory,
) -> None:
    engine = make_engine()
    short = request("w5 w6 w7", max_tokens=6)
    with running(engine, [LONG], [short], at_pass=5) as (run, (long_future,), (short_future,)):
        pass
    long_result, short_result = long_future.result(), short_future.result()
    # one pass of the joiner's own prefill, then it decodes with the long row: 2 rows a pass
    assert run.rows[:5] == [1] * 5
    assert run.rows[5:11] == [1, 2, 2, 2, 2, 2]
    assert run.rows[11:] == [1] * (len(run.rows) - 11)
    assert len(run.rows) == 1 + 199 + 1  # no batch of its own after the long one
    assert run.returned_at == {1: 11}  # while the long row had 190 steps to go
    assert engine.stats.batches == 1 and engine.stats.requests == 2
    assert engine.stats.generated == 206

    reference = alone(make_engine(), [LONG, short])
    assert long_result.tokens == reference[0].tokens  # unchanged by the joiner
    assert short_result.tokens == reference[1].tokens
    assert len(long_result.tokens) == 200


def test_joiners_reuse_their_cached_prefix_and_decode_as_alone(
    make_engine: EngineFactory,
) -> None:
    """Turn two of a conversation joins a running batch; its prefix comes from the cache."""
    engine, solo = make_engine(), make_engine()
    turn_two = second_turn(
        (engine, solo), request("w10 w11 w12 w13 w14 w15", max_tokens=8), "w20 w21"
    )
    fresh = request("w30 w31 w32 w33 w34", max_tokens=9)
    with running(engine, [LONG], [turn_two, fresh], at_pass=20) as (run, _, joined):
        pass
    joined_two, joined_fresh = (future.result() for future in joined)
    assert max(run.rows) == 3  # both joined, in one prefill pass
    assert run.rows[20] == 2  # the joiners' own prefill
    expected_two, expected_fresh = alone(solo, [turn_two, fresh])
    assert joined_two.reused_tokens > 0
    assert joined_two.tokens == expected_two.tokens
    assert joined_fresh.tokens == expected_fresh.tokens


def test_a_prompt_wider_than_the_batch_joins_once_the_batch_is_that_wide(
    make_engine: EngineFactory,
) -> None:
    engine = make_engine(kv_reuse=False)
    first = request("w1", max_tokens=40)
    wide = request(" ".join(f"w{i}" for i in range(20)), max_tokens=4)
    prompt, wide_prompt = (len(engine.render(r.messages)) for r in (first, wide))
    with running(engine, [first], [wide], at_pass=2) as (run, (first_future,), (wide_future,)):
        pass
    joined_at = run.rows.index(2) - 1  # the pass before is the joiner's prefill
    # it waited until the batch's columns (prompt + tokens fed) held its prompt
    assert prompt + joined_at - 1 >= wide_prompt > prompt + joined_at - 2
    reference = alone(make_engine(kv_reuse=False), [first, wide])
    assert first_future.result().tokens == reference[0].tokens
    assert wide_future.result().tokens == reference[1].tokens


def test_joiners_on_a_sliding_window_model_decode_as_alone(tiny_gemma_checkpoint: Path) -> None:
    def gemma() -> Engine:
        return Engine.from_pretrained(tiny_gemma_checkpoint, device="cpu", config=EngineConfig())

    engine, solo = gemma(), gemma()
    turn_two = second_turn(
        (engine, solo), request("w1 w2 w3 w4 w5 w6 w7 w8", max_tokens=5), "w9 w10 w11"
    )
    short = request("w40 w41", max_tokens=12)
    with running(engine, [LONG], [turn_two, short], at_pass=30) as (run, (long_future,), joined):
        pass
    assert max(run.rows) == 3
    expected = alone(solo, [LONG, turn_two, short])
    got = [long_future.result(), *(future.result() for future in joined)]
    assert got[1].reused_tokens > TINY_SLIDING_WINDOW
    assert [r.tokens for r in got] == [r.tokens for r in expected]


def test_a_row_that_stops_early_returns_before_its_batch_ends(make_engine: EngineFactory) -> None:
    """Two requests start together; the short one's caller returns mid-batch."""
    engine = make_engine()
    short = request("w5 w6", max_tokens=4)
    with running(engine, [LONG, short], [], at_pass=0) as (run, (long_f, short_f), _):
        pass
    assert run.rows[:6] == [1, 2, 2, 2, 2, 1]  # the gate's pass, then both rows, then one
    assert run.returned_at == {1: 5}  # the long row had 195 steps to go
    assert len(long_f.result().tokens) == 200
    assert short_f.result().tokens == alone(make_engine(), [short])[0].tokens


def test_a_cancelled_joiner_is_answered_at_once_or_stops_and_the_batch_goes_on(
    make_engine: EngineFactory,
) -> None:
    engine = make_engine(kv_reuse=False)
    before = threading.Event()
    before.set()  # cancelled while it waits: taken in and answered, never decoded
    during = threading.Event()  # cancelled after three of its tokens
    waiting = request("w7 w8", max_tokens=30, cancel=before)
    decoding = request("w9 w10", max_tokens=30, cancel=during)
    forward = engine._forward
    passes = 0

    def cancelling_forward(*args: Any) -> Any:
        nonlocal passes
        passes += 1
        if passes == 5 + 3:  # the joiner's prefill, then two steps with the batch
            during.set()
        return forward(*args)

    engine._forward = cancelling_forward  # type: ignore[method-assign]
    with running(engine, [LONG], [waiting, decoding], at_pass=5) as (run, (long_f,), joined):
        pass
    cancelled_waiting, cancelled_decoding = (future.result() for future in joined)
    assert cancelled_waiting.tokens == () and cancelled_waiting.stop_reason == "stop"
    assert run.rows[5:9] == [1, 2, 2, 1]  # only one joiner was prefilled; it left after 3
    reference = alone(make_engine(kv_reuse=False), [LONG, replace(decoding, cancel=None)])
    assert cancelled_decoding.tokens == reference[1].tokens[:3]
    assert long_f.result().tokens == reference[0].tokens


def test_an_error_while_joining_fails_the_batch_and_the_engine_serves_on(
    make_engine: EngineFactory,
) -> None:
    engine = make_engine()
    prefill = engine._prefill
    prefills = 0

    def failing_prefill(*args: Any) -> Any:
        nonlocal prefills
        prefills += 1
        if prefills == 2:  # the joiner's
            raise RuntimeError("joiner prefill failed")
        return prefill(*args)

    engine._prefill = failing_prefill  # type: ignore[method-assign]
    failing = pytest.raises(RuntimeError, match="joiner prefill failed")
    with failing, running(engine, [LONG], [request("w5")], at_pass=3) as (_, (long_f,), joined):
        pass
    for future in (long_f, *joined):
        with pytest.raises(RuntimeError, match="joiner prefill failed"):
            future.result()
    after = engine.submit(request("w6 w7"))
    assert after.tokens == alone(make_engine(), [request("w6 w7")])[0].tokens


def test_steered_requests_join_a_steered_batch_but_not_a_plain_one(
    make_engine: EngineFactory,
) -> None:
    engine = make_engine()
    hidden = engine.model.config.hidden_size
    delta = AddToOutput(torch.linspace(-2.0, 2.0, hidden))
    other = AddToOutput(torch.linspace(1.0, -1.0, hidden))
    with forward_hooks([(0, delta)]):
        steered = request("w3 w4 w5", max_tokens=6)
        steered_long = GenerationRequest(LONG.messages, LONG.params)
    with forward_hooks([(0, other)]):
        steered_other = request("w6 w7", max_tokens=6)
    plain_short = request("w8 w9", max_tokens=40)
    # a batch of plain and steered rows merges their additions: another steered row may join
    with running(engine, [steered_long, plain_short], [steered_other], at_pass=8) as (
        run,
        firsts,
        (joined,),
    ):
        pass
    assert 3 in run.rows  # it joined
    reference = alone(make_engine(), [steered_long, plain_short, steered_other])
    got = [*(future.result() for future in firsts), joined.result()]
    assert [r.tokens for r in got] == [r.tokens for r in reference]
    # a plain batch has no hooks attached: the steered request waits for the next batch
    with running(engine, [LONG], [steered], at_pass=3) as (run, _, (late,)):
        pass
    assert max(run.rows) == 1
    assert late.result().tokens == alone(make_engine(), [steered])[0].tokens
