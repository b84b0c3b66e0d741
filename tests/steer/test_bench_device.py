"""benchmarks/bench_device.py: skips cleanly without CUDA, and its code path runs on the CPU."""

from __future__ import annotations

import pytest
import torch
from benchmarks import bench_device


def test_without_cuda_it_says_skipped_and_builds_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(bench_device.CPU_FLAG, raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)

    def no_model(shape: bench_device.Shape) -> None:
        raise AssertionError("a model was built without a device")

    monkeypatch.setattr(bench_device, "run", no_model)
    bench_device.main()
    assert capsys.readouterr().out.startswith("SKIPPED: device bench: no CUDA device")


def test_the_prover_shape_is_deepseek_prover_v2_7b() -> None:
    shape = bench_device.PROVER_7B
    assert (shape.hidden, shape.layers, shape.heads, shape.intermediate, shape.vocab) == (
        4096,
        30,
        32,
        11008,
        102_400,
    )
    assert shape.dtype == torch.bfloat16 and shape.device == "cuda"


@pytest.mark.slow  # a whole benchmark run, if a tiny one: ~10 s idle, a minute on a busy CPU
def test_the_cpu_flag_runs_every_measurement_on_a_tiny_model(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(bench_device.CPU_FLAG, "1")
    bench_device.main()
    printed = capsys.readouterr().out
    for ratio in (
        "engine_vs_hf_generate_b1",
        "engine_vs_hf_generate_b16",
        "steering_overhead_pct_b1",
        "steering_overhead_pct_b16",
        "extraction_speedup",
    ):
        assert ratio in printed
