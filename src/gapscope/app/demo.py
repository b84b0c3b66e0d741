"""``make demo``: ``gapscope profile`` on the two embedded models at the demo's budget (``quick``,
shortened), offline, on a CPU, with a short steering sweep run beside it, then the report.

1. The CLB direction: extracted from one demo episode of SmolLM2 (seconds once the model is
   loaded; the first run also converts both embedded checkpoints). Both models run in the
   ``gguf`` format, their GGUFs' own codes evaluated exactly, faithful to fp32's output
   (``gapscope.models.calibration``; the grid's points are fp32's, tests/steer/
   test_gguf_demo_grid.py).
2. The study: S2B-LM's small ``demo`` preset with SmolLM2-135M-Instruct and Gemma 3 270M as
   the listener, and the rule-based and random reference listeners (the scale); OracleLadder
   on two bundled families, one rollout per probe. The budget is ``quick`` with one supporting
   game per attribute value (``coverage=1``: six model calls an episode instead of nine; the
   query games, which ZSCT scores, are the same four) and OracleLadder rollouts of up to 256
   tokens (``quick``: 384). The Lean-backed diagnostics are listed as
   skipped, with what would make them run. An installed diagnostic (a ``gapscope.diagnostics``
   entry point) is planned beside them, at its ``quick`` budget unless it defines a ``demo``
   one. A rerun of ``make demo`` resumes the same study.
   The steering sweep's five runs on SmolLM2 (the CLB direction and its orthogonal control
   at -4 and +1, and the unsteered baseline, on one episode) are tasks of the same
   ``eval_set``: the engine decodes them in the batches of the study's own SmolLM2 requests,
   where after it they would run alone (the sweep took a third of the demo's time that way).
3. The dosage curve and the HTML report over everything (plan, gap profile, figures, the
   dosage curve, the models compared item by item); then what each part cost, every log, and
   what to run next.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any, cast

from rich.console import Console

from gapscope.analysis import (
    S2B,
    Inputs,
    ModelRun,
    is_steering_run,
    ladder_view,
    load_all,
    print_plan,
    print_rows,
    specs,
    write_report,
)
from gapscope.app.kit import EMBEDDED_MODEL, table_console
from gapscope.app.profile import build_study
from gapscope.app.study import Study, StudyProgress, StudyTask, plan_of, run_study
from gapscope.app.sweep import (
    SweepCell,
    SweepResult,
    SweepSpec,
    cell_logs,
    finish_sweep,
    prepare_directions,
    sweep_cells,
)
from gapscope.ladder import TASK as LADDER_TASK
from gapscope.models import GEMMA3_270M

DEMO_MODELS = (EMBEDDED_MODEL, GEMMA3_270M.model_string)
"""Two offline models of different architectures, so the demo's logs can be compared."""
STEER_PRESET, STEER_ALPHAS, STEER_MAX_TOKENS = "demo", (-4.0, 0.0, 1.0), 160
EPISODE: dict[str, Any] = dict(S2B.budgets["demo"]["episode"])
"""The study's S2B episode at the ``demo`` budget, which the sweep plays too."""


def demo_study() -> Study:
    """Every diagnostic in the table on the demo's models at the ``demo`` budget: the
    installed ones too, at their ``quick`` budget when they define no ``demo`` one."""
    return build_study(
        list(DEMO_MODELS), list(specs()), "demo", Inputs(data={"families": "bundled"})
    )


def demo_sweep_spec(out: Path, model: str = EMBEDDED_MODEL) -> SweepSpec:
    """The demo's grid: the CLB direction and its orthogonal control at -4 and +1, and the
    unsteered baseline, on one episode of the study's own size (its files in ``out``)."""
    return SweepSpec(
        model=model,
        out=out,
        alphas=STEER_ALPHAS,
        controls=("orthogonal",),
        preset=STEER_PRESET,
        seeds=1,
        max_tokens=STEER_MAX_TOKENS,
        overrides=EPISODE,
    )


def _sweep_tasks(spec: SweepSpec) -> tuple[dict[str, Path], list[SweepCell], list[StudyTask]]:
    """Extract the CLB direction (one episode: seconds once the model is loaded) and build the
    grid's runs as tasks of the study, so that the engine decodes them in the same batches as
    the study's own SmolLM2 requests instead of after the study."""
    directions = prepare_directions(spec)
    cells = sweep_cells(spec, directions)
    tasks = [
        StudyTask(
            plan_of(
                cell.task, spec.model, S2B.name, f"steer {cell.direction} alpha {cell.alpha:+g}"
            ),
            cell.task,
            spec.model,
        )
        for cell in cells
    ]
    return directions, cells, tasks


def _show_sweep(result: SweepResult, console: Console) -> None:
    console.print(f"\nSteering sweep ({STEER_PRESET} preset, 1 episode, alphas -4, 0, +1):")
    for trend in result.trends:
        rho = "n/a" if trend.rho is None else f"{trend.rho:+.2f}"
        console.print(f"  {trend.direction:12s} Spearman rho {rho}  slope {trend.slope:+.2f}/alpha")
    console.print(f"  dosage curve: {result.files['png']} (and .svg; data {result.files['csv']})")


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
    study = demo_study()
    spec = demo_sweep_spec(log_dir / "steer-demo")
    console.print("Extracting the CLB direction (SmolLM2, one demo episode) ...")
    directions, cells, sweep = _sweep_tasks(spec)
    study.tasks += sweep
    timings["CLB direction (loading SmolLM2, extraction)"] = time.monotonic() - start
    start = time.monotonic()
    plan = study.plan()
    print_plan(plan, console)
    progress = StudyProgress(study, lambda line: print(line, file=sys.stderr, flush=True))
    # every task at once (Inspect's eval_set runs ten by default): the sweep's runs share
    # SmolLM2's batches with the study's from the start
    ending = run_study(study, log_dir, progress, max_samples=8, max_tasks=len(study.tasks))
    timings["study and sweep (S2B-LM, OracleLadder, steering)"] = time.monotonic() - start
    done = load_all([Path(t.log) for t in ending.finished])
    profiled = [loaded for loaded in done.logs if not is_steering_run(loaded)]
    print_rows([row for loaded in profiled for row in loaded.rows()], console)
    ladders = [cast(ModelRun, x.summary) for x in profiled if x.diagnostic.task == LADDER_TASK]
    if ladders:
        show = ladder_view(ladders).show
        assert show is not None
        show(console)
    start = time.monotonic()
    try:
        result = finish_sweep(spec, directions, cells, cell_logs(spec, cells, done.logs))
    except RuntimeError as error:
        console.print(f"\nSteering sweep FAILED: {error}", markup=False)
        for line in ending.lines():
            console.print(line, markup=False)
        sys.exit(ending.code or 1)
    _show_sweep(result, console)
    report = write_report(done, log_dir / "report.html", plan=plan)
    timings["dosage curve and report"] = time.monotonic() - start
    for note in report.notes:
        console.print(f"note: {note}", markup=False)
    console.print("\nWhat ran, and how long it took:")
    for part, seconds in timings.items():
        console.print(f"  {part:48s} {seconds:6.0f} s", markup=False)
    console.print(f"\nLogs in {log_dir}:", markup=False)
    for loaded in done.logs:
        console.print(f"  {loaded.path}", markup=False)
    _what_next(console, log_dir, report.html)
    console.print(f"\nReport: {report.html}", markup=False)
    if not ending.complete:
        for line in ending.lines():
            console.print(line, markup=False)
        sys.exit(ending.code)


if __name__ == "__main__":
    main()
