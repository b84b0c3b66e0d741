"""Per-attempt cost of the code pilot's sandbox (issue 27).

``python -m benchmarks.bench_code_sandbox``: one bundled problem's reference solution on all
its tests, judged by the parent, unsandboxed (resource limits and the audit hook only, what
``--allow-unsandboxed`` runs) and under bubblewrap (the default), against the same run's
baseline: a fresh ``python -I -S -c pass``, the least any attempt in its own interpreter can
cost. Runs alternate (a busy machine slows all alike); the median of each is reported, with
the ratios bubblewrap/unsandboxed and each/baseline. Before issue 27 the same attempt took
0.13 s unsandboxed and 0.21 s under bubblewrap on the development machine.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Callable

from gapscope.ladder.code import load_bundled_code
from gapscope.ladder.sandbox import Isolation, bwrap_status, run_tests


def _seconds(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def main(repeats: int = 15) -> None:
    problem = load_bundled_code().problems[0]
    program = problem.reference_solution or ""
    layers = [Isolation.UNSANDBOXED]
    if bwrap_status().available:
        layers.append(Isolation.BWRAP)
    else:
        print(f"bubblewrap not measured: {bwrap_status().detail}")

    def bare() -> None:
        subprocess.run([sys.executable, "-I", "-S", "-c", "pass"], check=True)

    def attempt(layer: Isolation) -> Callable[[], object]:
        def run() -> None:
            result = run_tests(program, problem.tests, problem.entry, layer=layer)
            assert result.solved, result

        return run

    times: dict[str, list[float]] = {"baseline": [], **{layer.value: [] for layer in layers}}
    for _ in range(repeats):
        times["baseline"].append(_seconds(bare))
        for layer in layers:
            times[layer.value].append(_seconds(attempt(layer)))
    median = {name: statistics.median(values) for name, values in times.items()}
    print(
        f"{problem.pid}, {len(problem.tests)} tests, median of {repeats}: "
        f"bare interpreter {median['baseline']:.3f} s"
    )
    for layer in layers:
        seconds = median[layer.value]
        print(
            f"{layer.value}: {seconds:.3f} s per attempt, {seconds / median['baseline']:.2f}x bare"
        )
    if Isolation.BWRAP in layers:
        ratio = median["bwrap"] / median["unsandboxed"]
        print(f"bwrap / unsandboxed: {ratio:.2f}")


if __name__ == "__main__":
    main()
