"""``make demo``: ``gapscope profile`` on the two embedded models at the demo's budget (``quick``,
shortened), offline, on a CPU, then a short steering sweep and the report.

1. The study: S2B-LM's small ``demo`` preset with SmolLM2-135M-Instruct and Gemma 3 270M as
   the listener, and the rule-based and random reference listeners (the scale); OracleLadder
   on two bundled families, one rollout per probe. The budget is ``quick`` with one supporting
   game per attribute value (``coverage=1``: six model calls an episode instead of nine; the
   query games, which ZSCT scores, are the same four) and OracleLadder rollouts of up to 256
   tokens (``quick``: 384). The Lean-backed diagnostics are listed as
   skipped, with what would make them run. A rerun of ``make demo`` resumes the same study.
2. A steering sweep on SmolLM2 (the CLB direction and its orthogonal control at three alphas
   on one small episode): the dosage-curve figure. Its five runs go side by side in one
   Inspect eval, so the engine decodes them in shared batches.
3. The HTML report over everything (plan, gap profile, figures, the dosage curve, the models
   compared item by item); then what each part cost, every log, and what to run next.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any, cast

from rich.console import Console

from gapscope.analysis import (
    BUILTINS,
    S2B,
    Inputs,
    LoadedLogs,
    ModelRun,
    ladder_view,
    load_all,
    log_path,
    print_plan,
    print_rows,
    write_report,
)
from gapscope.app.kit import EMBEDDED_MODEL, run_tasks, table_console
from gapscope.app.profile import build_study
from gapscope.app.study import StudyProgress, run_study
from gapscope.ladder import TASK as LADDER_TASK
from gapscope.models import GEMMA3_270M

DEMO_MODELS = (EMBEDDED_MODEL, GEMMA3_270M.model_string)
"""Two offline models of different architectures, so the demo's logs can be compared."""
STEER_PRESET, STEER_ALPHAS, STEER_MAX_TOKENS = "demo", (-4.0, 0.0, 1.0), 160
EPISODE: dict[str, Any] = dict(S2B.budgets["demo"]["episode"])
"""The study's S2B episode at the ``demo`` budget, which the sweep plays too."""


def _steering_sweep(log_dir: Path, console: Console) -> list[Path]:
    """Extract the CLB direction on a demo episode and sweep three alphas; print the trend.
    Returns the sweep's logs, which the report draws as a dosage curve."""
    from gapscope.app.sweep import SweepSpec, run_sweep

    spec = SweepSpec(
        model=EMBEDDED_MODEL,
        out=log_dir / "steer-demo",
        alphas=STEER_ALPHAS,
        controls=("orthogonal",),
        preset=STEER_PRESET,
        seeds=1,
        max_tokens=STEER_MAX_TOKENS,
        overrides=EPISODE,
    )
    result = run_sweep(spec, lambda tasks, model: run_tasks(tasks, model, log_dir))
    console.print(f"\nSteering sweep ({STEER_PRESET} preset, 1 episode, alphas -4, 0, +1):")
    for trend in result.trends:
        rho = "n/a" if trend.rho is None else f"{trend.rho:+.2f}"
        console.print(f"  {trend.direction:12s} Spearman rho {rho}  slope {trend.slope:+.2f}/alpha")
    console.print(f"  dosage curve: {result.files['png']} (and .svg; data {result.files['csv']})")
    return [log_path(location) for location in result.logs.values()]


def _what_next(console: Console, log_dir: Path, html: Path) -> None:
    console.print(
        "\nWhat you got: each embedded model's S2B-LM score beside the rule listener (100, the "
        "verbalizer) and the random one (chance), OracleLadder's outcome table on two families, "
        "a dosage curve, and the report. The embedded models are tiny: near chance is their "
        "result, not the tool's (the notes above say where an answer was degenerate).",
        soft_wrap=True,
    )
    console.print("\nWhat to run next:", soft_wrap=True)
    for line in (
        f".venv/bin/inspect view --log-dir {log_dir}   # every sample, prompt and answer",
        "gapscope profile --model openai-api/vllm/MODEL --budget paper --dry-run   # a real study",
        "gapscope lean setup ~/gapscope-lean   # then --lean local:~/gapscope-lean for O-NNG, "
        "pass@k, T2",
        f"open {html}",
    ):
        console.print(f"  {line}", markup=False, soft_wrap=True)


def main() -> None:
    console = table_console(sys.stdout)
    log_dir = Path(os.environ.get("INSPECT_LOG_DIR", "logs")).resolve()
    timings: dict[str, float] = {}
    start = time.monotonic()
    study = build_study(
        list(DEMO_MODELS), list(BUILTINS), "demo", Inputs(data={"families": "bundled"})
    )
    plan = study.plan()
    print_plan(plan, console)
    progress = StudyProgress(study, lambda line: print(line, file=sys.stderr, flush=True))
    ending = run_study(study, log_dir, progress, max_samples=8)
    timings["study (S2B-LM + OracleLadder, both models)"] = time.monotonic() - start
    done = load_all([Path(t.log) for t in ending.finished])
    print_rows([row for loaded in done.logs for row in loaded.rows()], console)
    ladders = [cast(ModelRun, x.summary) for x in done.logs if x.diagnostic.task == LADDER_TASK]
    if ladders:
        show = ladder_view(ladders).show
        assert show is not None
        show(console)
    start = time.monotonic()
    try:
        steered = _steering_sweep(log_dir, console)
    except RuntimeError as error:
        console.print(f"\nSteering sweep FAILED: {error}", markup=False)
        sys.exit(1)
    timings["steering sweep (SmolLM2)"] = time.monotonic() - start
    start = time.monotonic()
    swept = load_all(steered)
    everything = LoadedLogs(done.logs + swept.logs, done.notes + swept.notes)
    report = write_report(everything, log_dir / "report.html", plan=plan)
    timings["report"] = time.monotonic() - start
    for note in report.notes:
        console.print(f"note: {note}", markup=False)
    console.print("\nWhat ran, and how long it took:")
    for part, seconds in timings.items():
        console.print(f"  {part:48s} {seconds:6.0f} s", markup=False)
    console.print(f"\nLogs in {log_dir}:", markup=False)
    for loaded in everything.logs:
        console.print(f"  {loaded.path}", markup=False)
    _what_next(console, log_dir, report.html)
    console.print(f"\nReport: {report.html}", markup=False)
    if not ending.complete:
        for line in ending.lines():
            console.print(line, markup=False)
        sys.exit(ending.code)


if __name__ == "__main__":
    main()
