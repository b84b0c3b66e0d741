"""The harness's own cost per sample: each diagnostic with a model that answers instantly.

Baseline, same run: a bare Inspect task (one ``generate`` per sample, an exact-match scorer)
on the same instant model, so the ratio is what gapscope adds on top of Inspect itself:
episode building, prompts, the verbalizer, the verifier cascade, the score records. Reported
as generations/s (one model call each) and the ratio to the baseline's.

Lean-backed diagnostics are left out here: their cost is the Lean check, measured in
``bench_lean`` and ``bench_executor``.

Target (``make bench`` fails below it): OracleLadder at least as fast as the bare task
(``LADDER_TARGET``). Measured 1.45x, 1.22x and 1.32x in three runs on an idle 2-core machine
(2026-12-02; the verifier cascade runs on a worker thread, its checks in worker processes),
0.99-1.53x on a lightly shared one, and 0.26x beside five other jobs (load 20), where those
processes wait for a core: like every ratio here, it is meant for a machine that runs
nothing else.
"""

from __future__ import annotations

import tempfile
import time

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessage
from inspect_ai.scorer import match
from inspect_ai.solver import generate

from benchmarks.targets import Target
from gapscope.ladder.task import oracle_ladder
from gapscope.models.scripted import script
from gapscope.s2b.task import s2b_lm

BASELINE_SAMPLES = 400
LADDER_TARGET = 1.0


def _instant(messages: list[ChatMessage]) -> str:
    """Answers at once: an S2B decision for a game, a boxed number for anything else."""
    last = messages[-1].text
    return "Answer: same" if "Game " in last or "Sync round" in last else "\\boxed{1}"


INSTANT = script("bench-instant", _instant)


def _rate(task: Task, generations: int) -> float:
    """Generations per second of one run of ``task`` on the instant model."""
    with tempfile.TemporaryDirectory() as log_dir:
        start = time.perf_counter()
        (log,) = inspect_eval(task, model=INSTANT, log_dir=log_dir, display="none", max_samples=16)
        elapsed = time.perf_counter() - start
    if log.status != "success":
        raise RuntimeError(f"benchmark run failed: {log.error}")
    return generations / elapsed


def main() -> list[Target]:
    baseline = Task(
        dataset=[Sample(input=f"q{i}", target="\\boxed{1}") for i in range(BASELINE_SAMPLES)],
        solver=generate(),
        scorer=match(),
    )
    base_rate = _rate(baseline, BASELINE_SAMPLES)
    print(f"bare Inspect task: {base_rate:.0f} generations/s (baseline)")
    s2b = s2b_lm(preset="cat-10shot", seeds=4, listener="lm")
    s2b_calls = sum((s2b.metadata or {})["model_calls"].values())
    ladder = oracle_ladder(families="bundled", k=2)
    ladder_calls = len(ladder.dataset) * 2
    ratios = {}
    for name, task, calls in (
        ("S2B-LM cat-10shot, 4 episodes", s2b, s2b_calls),
        ("OracleLadder bundled, k = 2", ladder, ladder_calls),
    ):
        rate = _rate(task, calls)
        ratios[name] = rate / base_rate
        print(
            f"{name}: {calls} generations, {rate:.0f} generations/s, "
            f"{rate / base_rate:.2f}x the bare task"
        )
    ladder_ratio = ratios["OracleLadder bundled, k = 2"]
    return [Target("OracleLadder / bare Inspect task", ladder_ratio, LADDER_TARGET)]


if __name__ == "__main__":
    main()
