"""Rule-listener decisions per second through the whole Inspect task.

Baseline, same run: the same episodes played by the verbalizer alone (no Inspect). The ratio
is the runner's overhead per decision; the absolute rate says how fast a reference run is.
"""

from __future__ import annotations

import tempfile
import time
from typing import Any

from inspect_ai import eval as inspect_eval

from gapscope.s2b.config import resolve
from gapscope.s2b.episode import build_episode
from gapscope.s2b.task import s2b_lm
from gapscope.s2b.verbalizer import play


def rule_listener_throughput(preset: str = "cat-10shot", seeds: int = 32) -> dict[str, Any]:
    """Decisions/s of the rule listener: domain logic alone vs the full Inspect task."""
    config = resolve(preset)
    start = time.perf_counter()
    decisions = sum(len(play(build_episode(config, seed))) for seed in range(seeds))
    domain_s = time.perf_counter() - start

    with tempfile.TemporaryDirectory() as log_dir:
        start = time.perf_counter()
        logs = inspect_eval(
            s2b_lm(preset=preset, seeds=seeds, listener="rule"),
            model="none",
            log_dir=log_dir,
            display="none",
        )
        task_s = time.perf_counter() - start
    assert logs[0].status == "success"
    return {
        "preset": preset,
        "episodes": seeds,
        "decisions": decisions,
        "domain_decisions_per_s": decisions / domain_s,
        "inspect_task_decisions_per_s": decisions / task_s,
        "inspect_overhead_ratio": task_s / domain_s,
    }


def main() -> None:
    for key, value in rule_listener_throughput().items():
        print(f"{key:32s} {value:.3f}" if isinstance(value, float) else f"{key:32s} {value}")


if __name__ == "__main__":
    main()
