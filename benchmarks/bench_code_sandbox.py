"""Per-attempt cost of the code pilot's sandbox (issue 27).

``python -m benchmarks.bench_code_sandbox``: a one-line program on one test, and one bundled
problem's reference solution on all its tests, each judged by the parent, unsandboxed
(resource limits and the audit hook only, what ``--allow-unsandboxed`` runs) and under
bubblewrap (the default), against the same run's baseline: a fresh ``python -I -S -c pass``,
the least any attempt in its own interpreter can cost. Runs alternate (a busy machine slows
all alike); the median of each is reported, with the ratios bubblewrap/unsandboxed and
each/baseline. Before issue 27 a one-line program took 0.13 s unsandboxed and 0.21 s under
bubblewrap on the development machine (docs/ladder.md).

Targets, each against the same run's medians: the one-line attempt unsandboxed at most
``MAX_VS_BARE`` times a bare interpreter start (what the judge adds to the start-up every
attempt pays; the reference solution's own work is not the judge's), and bubblewrap at most
``MAX_BWRAP`` times the unsandboxed attempt on both workloads (the sandbox must stay cheap
enough to be the default). Where bubblewrap does not work only the first is stated.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence

from benchmarks.targets import Target, at_most
from gapscope.ladder.code import load_bundled_code
from gapscope.ladder.sandbox import CodeTest, Isolation, bwrap_status, run_tests


def _seconds(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def _attempt_seconds(
    program: str, tests: Sequence[CodeTest], entry: str | None, layer: Isolation
) -> float:
    start = time.perf_counter()
    result = run_tests(program, tests, entry, layer=layer)
    seconds = time.perf_counter() - start
    assert result.solved, result
    return seconds


ONE_LINE = "print(42)"
MAX_VS_BARE = 6.0
MAX_BWRAP = 2.5


def main(repeats: int = 15) -> list[Target]:
    problem = load_bundled_code().problems[0]
    workloads = {
        "one-line program, one test": (ONE_LINE, (CodeTest("", "42"),), None),
        f"{problem.pid} reference, {len(problem.tests)} tests": (
            problem.reference_solution or "",
            problem.tests,
            problem.entry,
        ),
    }
    layers = [Isolation.UNSANDBOXED]
    if bwrap_status().available:
        layers.append(Isolation.BWRAP)
    else:
        print(f"bubblewrap not measured: {bwrap_status().detail}")

    def bare() -> None:
        subprocess.run([sys.executable, "-I", "-S", "-c", "pass"], check=True)

    targets: list[Target] = []
    for name, (program, tests, entry) in workloads.items():
        times: dict[str, list[float]] = {"baseline": [], **{layer.value: [] for layer in layers}}
        for _ in range(repeats):
            times["baseline"].append(_seconds(bare))
            for layer in layers:
                times[layer.value].append(_attempt_seconds(program, tests, entry, layer))
        median = {key: statistics.median(values) for key, values in times.items()}
        line = [f"{name}, median of {repeats}: bare interpreter {median['baseline']:.3f} s"]
        for layer in layers:
            seconds = median[layer.value]
            line.append(f"{layer.value} {seconds:.3f} s ({seconds / median['baseline']:.1f}x bare)")
        if Isolation.BWRAP in layers:
            line.append(f"bwrap/unsandboxed {median['bwrap'] / median['unsandboxed']:.2f}")
            ratio = median["bwrap"] / median["unsandboxed"]
            targets.append(at_most(f"code pilot {name}: bwrap / unsandboxed", ratio, MAX_BWRAP))
        print("; ".join(line))
        if program == ONE_LINE:
            ratio = median["unsandboxed"] / median["baseline"]
            targets.append(at_most(f"code pilot {name}: unsandboxed / bare", ratio, MAX_VS_BARE))
    return targets


if __name__ == "__main__":
    main()
