"""``make bench``: every benchmark, each reporting ratios against a same-run baseline.

At the end: every target, then every skip with its reason (counted), then the benchmarks that
ran but gated no required target (``ungated``), so none of them passes unnoticed.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from benchmarks import (
    bench_code_sandbox,
    bench_demo_memory,
    bench_device,
    bench_engine_cpu,
    bench_executor,
    bench_harness,
    bench_interrupt,
    bench_lean,
    bench_models,
    bench_report,
    bench_s2b,
    bench_screen,
    bench_steer,
    bench_t2_heads,
    bench_t2_successors,
    bench_verifier,
)
from benchmarks.targets import Skipped, Target, missed

Bench = Callable[[], object]
"""A benchmark's ``main``: it may return the ``Target``s it measured."""


def _items(result: object) -> list[object]:
    return list(result) if isinstance(result, list | tuple) else []


def main() -> None:
    """Run every benchmark; exit 1 when one of them missed a required target."""
    benches: tuple[tuple[str, Bench], ...] = (
        ("S2B rule listener throughput", bench_s2b.main),
        (
            "harness overhead per generation (instant model) vs a bare Inspect task",
            bench_harness.main,
        ),
        ("verifier cascade vs math-verify", bench_verifier.main),
        ("embedded model: load time", bench_models.main),
        ("Lean local backend: pooled REPLs vs a fresh process per check", bench_lean.main),
        ("Lean executors: local pool vs 1 and 2 Ray actors (checks/s)", bench_executor.main),
        ("gapscope report: 10 vs 100 logs", bench_report.main),
        ("steering: overhead and extraction throughput", bench_steer.main),
        ("Ctrl-C during an embedded run: seconds to exit", bench_interrupt.main),
        ("command screen: 56 KB hostile vs benign replies", bench_screen.main),
        ("T2 declaration heads: 56 KB hostile vs benign reply", bench_t2_heads.main),
        ("T2 project-wide successors: name index vs a scan per record", bench_t2_successors.main),
        (
            "code pilot: seconds per attempt, unsandboxed and under bubblewrap",
            bench_code_sandbox.main,
        ),
        ("device (CUDA): engine vs HF generate, steering, extraction at 7B", bench_device.main),
        (
            "CPU engine: embedded models vs HF generate, llama.cpp and the bandwidth bound",
            bench_engine_cpu.main,
        ),
        ("make demo: peak memory (RSS) against 3 GB", bench_demo_memory.main),
    )
    targets: list[Target] = []
    skips: list[Skipped] = []
    ungated: list[str] = []
    for name, bench in benches:
        print(f"\n== {name} ==")
        items = _items(bench())
        found = [item for item in items if isinstance(item, Target)]
        skips += [item for item in items if isinstance(item, Skipped)]
        targets += found
        if not any(target.required for target in found) and not any(
            isinstance(item, Skipped) for item in items
        ):
            ungated.append(name)
    if targets:
        print("\n== targets ==")
        for target in targets:
            print(target.line())
    print(f"\n== skipped: {len(skips)} ==")
    for skip in skips:
        print(skip.line())
    if ungated:
        print(f"\n== ran without a required target: {len(ungated)} ==")
        for name in ungated:
            print(f"UNGATED: {name}")
    if missed(targets):
        sys.exit(1)


if __name__ == "__main__":
    main()
