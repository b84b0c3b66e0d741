"""`make bench` must not rot: every benchmark module imports and is run by `benchmarks/__main__`.

(bench_steer imported a function from the module it lived in before a refactoring and `make
bench` stopped at it; nothing in the test suite noticed.)
"""

from __future__ import annotations

import importlib
import inspect
import time
from pathlib import Path
from typing import Any

import pytest
from benchmarks.targets import Target, missed

BENCHMARKS = Path(__file__).parent.parent / "benchmarks"


def test_every_benchmark_imports_and_is_run_by_make_bench() -> None:
    runner = importlib.import_module("benchmarks.__main__")
    listed = inspect.getsource(runner)
    names = sorted(p.stem for p in BENCHMARKS.glob("bench_*.py"))
    assert names, "no benchmark found"
    for name in names:
        module = importlib.import_module(f"benchmarks.{name}")
        assert callable(getattr(module, "main", None)), f"{name} has no main()"
        assert f"{name}.main" in listed, f"{name} is not run by make bench"


def test_a_missed_required_target_fails_make_bench(monkeypatch: pytest.MonkeyPatch) -> None:
    runner = importlib.import_module("benchmarks.__main__")
    goal = Target("goal", 0.5, 1.0, required=False)
    for name in dir(runner):
        module = getattr(runner, name)
        if name.startswith("bench_") and hasattr(module, "main"):
            monkeypatch.setattr(module, "main", lambda: None)
    monkeypatch.setattr(runner.bench_engine_cpu, "main", lambda: [goal, Target("met", 2, 1)])
    runner.main()  # a missed goal is reported, not failed on
    monkeypatch.setattr(runner.bench_engine_cpu, "main", lambda: [Target("speed", 0.9, 1.0)])
    with pytest.raises(SystemExit) as exit_info:
        runner.main()
    assert exit_info.value.code == 1
    assert missed([goal, Target("speed", 0.9, 1.0)]) == [Target("speed", 0.9, 1.0)]


def test_a_slowdown_ceiling_is_met_at_or_under_it_and_missed_above() -> None:
    from benchmarks.targets import at_most

    assert at_most("hostile / benign", 2.9, 3.0).met
    assert at_most("hostile / benign", 3.0, 3.0).met
    over = at_most("hostile / benign", 3.3, 3.0)
    assert missed([over]) == [over] and "3.30x, at most 3x" in over.line()
    # the verifier's time beyond its deadlines came out below them (-0.81x): no slowdown
    below = at_most("hostile lines beyond their deadlines / clean", -0.81, 2.0)
    assert below.met and "-0.81x, at most 2x" in below.line()
    assert at_most("hostile / benign", 0.0, 3.0).met


def test_skips_are_counted_and_listed_and_a_bench_without_a_target_is_named(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from benchmarks.targets import skipped

    runner = importlib.import_module("benchmarks.__main__")
    for name in dir(runner):
        module = getattr(runner, name)
        if name.startswith("bench_") and hasattr(module, "main"):
            monkeypatch.setattr(module, "main", lambda: [Target("met", 2, 1)])
    monkeypatch.setattr(runner.bench_executor, "main", lambda: [skipped("Ray", "no ray")])
    monkeypatch.setattr(runner.bench_lean, "main", lambda: None)
    runner.main()
    out = capsys.readouterr().out
    assert "== skipped: 1 ==" in out and out.count("SKIPPED: Ray: no ray") == 2
    assert "UNGATED: Lean local backend" in out


def test_the_demo_peak_is_read_from_gnu_time() -> None:
    from benchmarks.bench_demo_memory import peak_rss_gb

    report = "\tMaximum resident set size (kbytes): 2929688\n\tExit status: 0\n"
    assert round(peak_rss_gb(report), 2) == 3.0
    with pytest.raises(ValueError, match="Maximum resident set size"):
        peak_rss_gb("Exit status: 0")


def test_the_engine_arm_reads_decode_time_off_the_engine_not_a_second_prefill() -> None:
    """The batch-8 decode rate once subtracted a timed one-token call from the full call: the
    noise of an 8-prompt prefill (20-30 s) swamped a 3 s decode. Now the prefill is whatever
    the engine did not spend decoding, in the one call, and each row's first token goes
    with it."""
    from types import SimpleNamespace

    from benchmarks.bench_engine_cpu import MAX_TOKENS, _engine_arm

    calls: list[int] = []

    def generate(requests: list[Any]) -> list[Any]:
        calls.append(len(requests))
        engine.stats.decode_seconds += 2.0  # as if 2 s of decode steps
        time.sleep(0.05)
        return [SimpleNamespace(tokens=[0] * MAX_TOKENS) for _ in requests]

    engine = SimpleNamespace(stats=SimpleNamespace(decode_seconds=0.0), generate=generate)
    rate = _engine_arm(engine, 8, [()] * 8)()  # type: ignore[arg-type]
    assert calls == [8]  # one call, no separate prefill call
    assert rate.generated == 8 * MAX_TOKENS
    assert rate.decode == pytest.approx(8 * (MAX_TOKENS - 1) / 2.0)
    one_by_one = _engine_arm(engine, 1, [()] * 3)()  # type: ignore[arg-type]
    assert calls[1:] == [1, 1, 1]
    assert one_by_one.decode == pytest.approx(3 * (MAX_TOKENS - 1) / 6.0)


def test_the_s2b_prefill_counts_no_prefill_for_a_call_past_the_context() -> None:
    """A call whose prompt outgrew the context is refused with ``model_length`` and nothing
    computed; one that computed its prompt and then reached the context's end is counted."""
    from types import SimpleNamespace

    from benchmarks.bench_s2b import _computed_prefill
    from inspect_ai.event import ModelEvent
    from inspect_ai.model import GenerateConfig, ModelOutput, ModelUsage

    def call(prompt: int, reused: int, output: int, reason: str) -> ModelEvent:
        result = ModelOutput.from_content("m", "x" * output, stop_reason=reason)  # type: ignore[arg-type]
        result.usage = ModelUsage(
            input_tokens=prompt,
            output_tokens=output,
            total_tokens=prompt + output,
            input_tokens_cache_read=reused,
        )
        return ModelEvent(
            model="m",
            input=[],
            tools=[],
            tool_choice="none",
            config=GenerateConfig(),
            output=result,
        )

    events = [
        call(219, 0, 8, "max_tokens"),
        call(330, 219, 8, "stop"),
        call(8180, 8000, 3, "model_length"),  # computed its suffix, then hit the end
        call(8282, 0, 0, "model_length"),  # refused whole
    ]
    log = SimpleNamespace(samples=[SimpleNamespace(events=events)])
    assert _computed_prefill(log) == [219, 111, 180, 0]  # type: ignore[arg-type]
