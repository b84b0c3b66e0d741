"""The harness's own cost per sample: each diagnostic with a model that answers instantly.

Baseline, same run: a bare Inspect task (one ``generate`` per sample, an exact-match scorer)
on the same instant model, so the ratio is what gapscope adds on top of Inspect itself:
episode building, prompts, the verbalizer, the verifier cascade, the score records. Reported
as generations/s (one model call each) and the ratio to the baseline's.

Lean-backed diagnostics are left out here: their cost is the Lean check, measured in
``bench_lean`` and ``bench_executor``.

Every arm runs once to warm up (imports, the verifier's worker processes, caches), then
``ROUNDS`` rounds run the arms in turn, and each arm's rate is its median: the bare task no
longer runs first, cold and once, which had made OracleLadder look 1.22-1.45x faster than it
(interleaved and warm it was 0.82x, measured for issue 40).

Target (``make bench`` fails below it): OracleLadder at least as fast as the bare task
(``LADDER_TARGET``). Like every ratio here it is meant for a machine that runs nothing else.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable

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
ROUNDS = 3
BARE = "bare Inspect task (baseline)"
LADDER = "OracleLadder bundled, k = 2"


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


def _arms() -> dict[str, tuple[Callable[[], Task], int]]:
    """Each arm: a fresh task (a task is built per run, as a user's run builds it) and the
    generations one run makes."""
    s2b = s2b_lm(preset="cat-10shot", seeds=4, listener="lm")
    ladder = oracle_ladder(families="bundled", k=2)
    return {
        BARE: (_bare, BASELINE_SAMPLES),
        "S2B-LM cat-10shot, 4 episodes": (
            lambda: s2b_lm(preset="cat-10shot", seeds=4, listener="lm"),
            sum((s2b.metadata or {})["model_calls"].values()),
        ),
        LADDER: (lambda: oracle_ladder(families="bundled", k=2), len(ladder.dataset) * 2),
    }


def _bare() -> Task:
    return Task(
        dataset=[Sample(input=f"q{i}", target="\\boxed{1}") for i in range(BASELINE_SAMPLES)],
        solver=generate(),
        scorer=match(),
    )


def main() -> list[Target]:
    """One warm-up round of every arm, then ``ROUNDS`` rounds with the arms in turn; each arm's
    rate is its median, so neither the first (cold) run nor the machine's load favours one."""
    arms = _arms()
    for build, calls in arms.values():
        _rate(build(), calls)
    rates: dict[str, list[float]] = {name: [] for name in arms}
    for _ in range(ROUNDS):
        for name, (build, calls) in arms.items():
            rates[name].append(_rate(build(), calls))
    medians = {name: statistics.median(values) for name, values in rates.items()}
    base = medians[BARE]
    for name, (_, calls) in arms.items():
        print(
            f"{name}: {calls} generations, {medians[name]:.0f} generations/s (median of "
            f"{ROUNDS} warm rounds), {medians[name] / base:.2f}x the bare task"
        )
    return [Target("OracleLadder / bare Inspect task", medians[LADDER] / base, LADDER_TARGET)]


if __name__ == "__main__":
    main()
