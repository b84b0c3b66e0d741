"""Engine behaviour on a tiny random Llama: KV reuse, batching, sampling, stopping."""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from gapscope.models.engine import Engine, GenerationRequest, GenerationResult, SamplingParams
from tests.models.conftest import EngineFactory
from tests.models.open_files import mapped_files_in, opened_files_in

Messages = tuple[Mapping[str, str], ...]

USER_TURNS = ["w1 w2 w3 w4", "w5 w6 w7", "w8 w9 w10 w11 w12", "w13 w14"]


def ask(engine: Engine, messages: Messages, max_tokens: int = 6) -> GenerationResult:
    request = GenerationRequest(messages, SamplingParams(max_tokens=max_tokens))
    return engine.generate([request])[0]


def converse(engine: Engine, turns: list[str]) -> list[GenerationResult]:
    """Run an append-only conversation: each reply is appended before the next user turn."""
    messages: Messages = ({"role": "system", "content": "w0"},)
    results = []
    for turn in turns:
        messages = (*messages, {"role": "user", "content": turn})
        result = ask(engine, messages)
        results.append(result)
        messages = (*messages, {"role": "assistant", "content": result.text})
    return results


def test_kv_reuse_gives_the_same_tokens_as_recomputing(make_engine: EngineFactory) -> None:
    with_reuse = converse(make_engine(kv_reuse=True), USER_TURNS)
    without = converse(make_engine(kv_reuse=False), USER_TURNS)
    assert [r.tokens for r in with_reuse] == [r.tokens for r in without]
    assert all(r.reused_tokens == 0 for r in without)
    assert all(r.reused_tokens > 0 for r in with_reuse[1:])


def test_second_turn_computes_only_the_new_suffix(make_engine: EngineFactory) -> None:
    engine = make_engine()
    first, second = converse(engine, USER_TURNS[:2])
    # Everything fed to the model in turn 1 (prompt + all but the last reply token) is
    # reused; the last reply token, the turn markers and the new user turn are computed.
    assert second.reused_tokens == first.prompt_tokens + len(first.tokens) - 1
    assert engine.stats.prefill_reused == second.reused_tokens
    assert engine.stats.prefill_computed == first.prompt_tokens + second.computed_tokens
    assert second.computed_tokens < first.prompt_tokens
    assert engine.stats.generated == len(first.tokens) + len(second.tokens)
    engine.stats.reset()
    assert engine.stats.prefill_computed == engine.stats.prefill_reused == 0


def test_identical_request_still_feeds_one_token(make_engine: EngineFactory) -> None:
    engine = make_engine()
    messages: Messages = ({"role": "user", "content": "w3 w4"},)
    first = ask(engine, messages, max_tokens=1)
    again = ask(engine, messages, max_tokens=1)
    assert again.reused_tokens == first.prompt_tokens - 1
    assert again.tokens == first.tokens


def histories() -> list[Messages]:
    """Three conversations that will have cached prefixes of different lengths."""
    return [
        ({"role": "user", "content": "w1 w2 w3 w4 w5 w6"},),
        ({"role": "user", "content": "w7"},),
        ({"role": "user", "content": "w9 w10 w11"},),
    ]


def test_batched_rows_with_different_prefixes_match_sequential(
    make_engine: EngineFactory,
) -> None:
    outputs = {}
    for mode in ("sequential", "batched"):
        engine = make_engine(batch_size=8 if mode == "batched" else 1)
        # Warm the cache for the first two conversations only (different lengths).
        warm = [ask(engine, h, max_tokens=n) for h, n in zip(histories()[:2], (5, 2), strict=True)]
        follow_ups = [
            (*h, {"role": "assistant", "content": w.text}, {"role": "user", "content": "w20"})
            for h, w in zip(histories()[:2], warm, strict=True)
        ] + [histories()[2]]
        # Different max_tokens make rows finish (and leave the batch) at different steps.
        requests = [
            GenerationRequest(m, SamplingParams(max_tokens=n))
            for m, n in zip(follow_ups, (3, 7, 5), strict=True)
        ]
        results = engine.generate(requests)
        assert engine.stats.batches == (3 if mode == "batched" else 5)
        # One more turn for each, served from the caches the batch stored.
        again = engine.generate(
            [
                GenerationRequest(
                    (
                        *m,
                        {"role": "assistant", "content": r.text},
                        {"role": "user", "content": "w21"},
                    ),
                    SamplingParams(max_tokens=4),
                )
                for m, r in zip(follow_ups, results, strict=True)
            ]
        )
        outputs[mode] = (results, again)
    sequential, batched = outputs["sequential"], outputs["batched"]
    for seq_results, batch_results in zip(sequential, batched, strict=True):
        assert [r.tokens for r in batch_results] == [r.tokens for r in seq_results]
        # A batch feeds every row the same number of tokens: rows reuse at most what a
        # sequential run reuses, and a row with a cached prefix computes exactly that many.
        for batch, alone in zip(batch_results, seq_results, strict=True):
            assert batch.reused_tokens <= alone.reused_tokens
        span = max(r.computed_tokens for r in batch_results)
        assert all(r.computed_tokens == span for r in batch_results if r.reused_tokens)
    reused = [r.reused_tokens for r in batched[0]]
    assert len(set(reused)) == 3  # three different cached-prefix lengths in one batch
    assert all(r.reused_tokens > 0 for r in batched[1])

    recomputed = make_engine(kv_reuse=False)
    fresh = recomputed.generate(
        [GenerationRequest(m, SamplingParams(max_tokens=3)) for m in follow_ups[:1]]
    )
    assert fresh[0].tokens == batched[0][0].tokens


def test_seeded_sampling_is_reproducible_and_batch_independent(
    make_engine: EngineFactory,
) -> None:
    params = SamplingParams(max_tokens=8, temperature=1.5, top_p=0.9, top_k=20, seed=7)
    messages: Messages = ({"role": "user", "content": "w1 w2"},)
    alone = make_engine(kv_reuse=False).generate([GenerationRequest(messages, params)])[0]
    other = GenerationRequest(({"role": "user", "content": "w30"},), params)
    batched = make_engine(kv_reuse=False).generate([other, GenerationRequest(messages, params)])
    assert batched[1].tokens == alone.tokens
    reseeded = SamplingParams(max_tokens=8, temperature=1.5, top_p=0.9, top_k=20, seed=8)
    different = make_engine().generate([GenerationRequest(messages, reseeded)])[0]
    assert different.tokens != alone.tokens


def test_stop_sequences_end_the_reply(make_engine: EngineFactory) -> None:
    engine = make_engine()
    messages: Messages = ({"role": "user", "content": "w1 w2 w3"},)
    free = ask(engine, messages, max_tokens=6)
    words = free.text.split()
    stop = f"{words[1]} {words[2]}"  # a two-word stop string, split across tokens
    stopped = engine.generate(
        [GenerationRequest(messages, SamplingParams(max_tokens=6, stop=(stop,)))]
    )[0]
    assert stopped.stop_reason == "stop"
    assert stopped.text.split() == words[:1]
    assert len(stopped.tokens) == 3
    assert free.stop_reason == "max_tokens"


def test_prompt_longer_than_the_context_reports_model_length(make_engine: EngineFactory) -> None:
    engine = make_engine()
    long = " ".join(["w5"] * 1100)
    result = ask(engine, ({"role": "user", "content": long},))
    assert result.stop_reason == "model_length"
    assert result.text == ""
    assert engine.stats.prefill_computed == 0


def test_decoder_layers_are_the_transformer_blocks(make_engine: EngineFactory) -> None:
    engine = make_engine()
    layers = engine.decoder_layers()
    assert len(layers) == 2
    assert layers[0] is engine.model.model.layers[0]


def test_submit_from_threads_matches_generate(make_engine: EngineFactory) -> None:
    from concurrent.futures import ThreadPoolExecutor

    prompts: list[Messages] = [({"role": "user", "content": f"w{i} w{i + 1}"},) for i in range(6)]
    requests = [GenerationRequest(p, SamplingParams(max_tokens=4)) for p in prompts]
    expected = make_engine(kv_reuse=False).generate(requests)
    engine = make_engine(kv_reuse=False, batch_size=4)
    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(engine.submit, requests))
    assert [r.tokens for r in results] == [r.tokens for r in expected]
    assert engine.stats.requests == 6


def test_invalid_batch_size_is_rejected(make_engine: EngineFactory) -> None:
    with pytest.raises(ValueError, match="batch_size"):
        make_engine(batch_size=0)


def test_max_tokens_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_tokens"):
        SamplingParams(max_tokens=0)


def test_cancelled_request_stops_between_decode_steps(make_engine: EngineFactory) -> None:
    """Ctrl-C sets the request's event: decoding ends at the next step, not at max_tokens."""
    import threading

    engine = make_engine(kv_reuse=False)
    messages: Messages = ({"role": "user", "content": "w1 w2 w3"},)
    params = SamplingParams(max_tokens=40)
    full = engine.generate([GenerationRequest(messages, params)])[0]
    assert len(full.tokens) > 3  # the tiny model does not stop on its own this early

    cancel = threading.Event()
    forward = engine._forward
    calls = 0

    def counting_forward(*args: object) -> object:
        nonlocal calls
        calls += 1
        if calls == 3:
            cancel.set()
        return forward(*args)  # type: ignore[arg-type]

    engine._forward = counting_forward  # type: ignore[method-assign,assignment]
    stopped = engine.generate([GenerationRequest(messages, params, cancel=cancel)])[0]
    assert len(stopped.tokens) == 3
    assert stopped.tokens == full.tokens[:3]
    before = engine.generate([GenerationRequest(messages, params, cancel=cancel)])[0]
    assert before.tokens == ()  # a request cancelled while queued never starts


def test_ignore_eos_decodes_to_max_tokens(make_engine: EngineFactory) -> None:
    """Benchmarks compare equal work: a reply that hits end-of-sequence must go on."""
    engine = make_engine(kv_reuse=False)
    engine._eos = frozenset(range(engine.model.config.vocab_size))  # every token ends a reply
    messages: Messages = ({"role": "user", "content": "w1 w2"},)
    stopped = ask(engine, messages, max_tokens=5)
    assert (len(stopped.tokens), stopped.stop_reason) == (1, "stop")  # the end token itself
    forced = engine.generate(
        [GenerationRequest(messages, SamplingParams(max_tokens=5, ignore_eos=True))]
    )[0]
    assert (len(forced.tokens), forced.stop_reason) == (5, "max_tokens")


def test_turns_served_from_spilled_entries_equal_turns_served_from_memory(
    make_engine: EngineFactory, private_tmpdir: Path
) -> None:
    """On the CPU the prefix cache keeps its keys/values in unnamed files: a reuse from a file
    gives the tokens a reuse from memory gives, and those of a cold run."""
    from gapscope.models.kvcache import PrefixCache

    spilled = make_engine(batch_size=8)
    assert spilled.cache.spills
    in_memory = make_engine(batch_size=8)
    in_memory.cache = PrefixCache(16, spilled.cache.max_bytes)
    cold = make_engine(kv_reuse=False)
    replies = [converse(engine, USER_TURNS) for engine in (spilled, in_memory, cold)]
    assert [r.tokens for r in replies[0]] == [r.tokens for r in replies[1]]
    assert [r.tokens for r in replies[0]] == [r.tokens for r in replies[2]]
    assert [r.reused_tokens for r in replies[0]] == [r.reused_tokens for r in replies[1]]
    assert all(r.reused_tokens > 0 for r in replies[0][1:])
    # a file an entry, nameless, and no mapping left once the batches copied their prefixes
    assert len(opened_files_in(private_tmpdir)) == len(spilled.cache) > 0
    assert not any(private_tmpdir.iterdir()) and not mapped_files_in(private_tmpdir)
    assert not in_memory.cache.spills


def test_two_cpu_engines_never_compute_at_once(make_engine: EngineFactory) -> None:
    """The demo's two models share the cores: while one computes, the other waits, so only
    one model's batch buffers and activations are resident at a time."""
    import threading

    first, second = make_engine(kv_reuse=False), make_engine(kv_reuse=False)
    first_started, second_started = threading.Event(), threading.Event()
    overlapped: list[bool] = []

    def first_hook(*_: object) -> None:
        if not first_started.is_set():
            first_started.set()
            overlapped.append(second_started.wait(timeout=2.0))

    def second_hook(*_: object) -> None:
        second_started.set()

    first.decoder_layers()[0].register_forward_hook(first_hook)
    second.decoder_layers()[0].register_forward_hook(second_hook)
    messages: Messages = ({"role": "user", "content": "w1 w2"},)
    runner = threading.Thread(target=ask, args=(first, messages, 2))
    runner.start()
    assert first_started.wait(timeout=30)
    other = threading.Thread(target=ask, args=(second, messages, 2))
    other.start()
    runner.join()
    other.join()
    assert overlapped == [False] and second_started.is_set()


def test_decode_seconds_count_the_decode_steps_not_the_prefill(
    make_engine: EngineFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A benchmark reads the decode rate off ``stats.decode_seconds``: a slow prefill must
    not enter it, every decode step must."""
    engine = make_engine(kv_reuse=False)
    prefill, forward = engine._prefill, engine._forward
    steps: list[int] = []

    def slow_prefill(*args: Any) -> Any:
        time.sleep(0.4)
        return prefill(*args)

    def slow_step(input_ids: Any, *args: Any) -> Any:
        if input_ids.shape[1] == 1:
            steps.append(1)
            time.sleep(0.02)
        return forward(input_ids, *args)

    monkeypatch.setattr(engine, "_prefill", slow_prefill)
    monkeypatch.setattr(engine, "_forward", slow_step)
    params = SamplingParams(max_tokens=6, ignore_eos=True)
    engine.generate([GenerationRequest(({"role": "user", "content": "w1 w2"},), params)])
    assert len(steps) == 5  # the first token comes with the prefill
    assert 5 * 0.02 <= engine.stats.decode_seconds < 0.4
    engine.stats.reset()
    assert engine.stats.decode_seconds == 0.0
