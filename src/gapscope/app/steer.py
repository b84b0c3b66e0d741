"""``gapscope steer extract`` and ``gapscope run steer``: thin layers over extraction and the
dosage sweep (:mod:`gapscope.app.sweep`)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from gapscope.analysis import View
from gapscope.app.kit import (
    EMBEDDED_MODEL,
    EXIT_RUN_FAILED,
    Interrupted,
    JsonOut,
    command_output,
    interrupted,
    refuse_overwriting,
    require_directory,
    run_tasks,
)
from gapscope.app.options import Overrides, parse_overrides
from gapscope.app.spec_run import TaskArgsOption, parse_task_args
from gapscope.s2b import CORRUPTIONS, DEFAULT_CORRUPTION, ConfigError, check_corruption, resolve
from gapscope.steer import EXTRACTION_FIRST_SEED

if TYPE_CHECKING:  # Inspect and torch load only when a command runs
    from inspect_ai import Task
    from inspect_ai.log import EvalLog


steer_app = typer.Typer(
    help="Activation steering: extract the CLB direction (CAA) from S2B-LM trace pairs.",
    no_args_is_help=True,
)


CorruptionOption = Annotated[
    str,
    typer.Option(
        help=f"How the negative traces are corrupted: {' | '.join(CORRUPTIONS)} "
        "(docs/steering.md says what each contrasts)."
    ),
]


@steer_app.command("extract")
def extract(
    out: Annotated[Path, typer.Option(help="Direction directory to write.")],
    preset: Annotated[str, typer.Option(help="S2B-LM preset of the pair episodes.")] = (
        "cat-10shot"
    ),
    seeds: Annotated[int, typer.Option(min=1, help="Episodes to draw pairs from.")] = 4,
    first_seed: Annotated[
        int,
        typer.Option(
            help="Seed of the first episode (default: run steer's, held out from the evaluation "
            "seeds 0..)."
        ),
    ] = EXTRACTION_FIRST_SEED,
    model: Annotated[
        str, typer.Option(help="gapscope/embedded or gapscope/hf/<checkpoint> (local weights).")
    ] = EMBEDDED_MODEL,
    corruption: CorruptionOption = DEFAULT_CORRUPTION,
    layers: Annotated[
        str, typer.Option(help="last-quarter (seed default) | all | 20,21,...")
    ] = "last-quarter",
    set_: Overrides = None,
    json_out: JsonOut = False,
) -> None:
    """Teacher-force correct vs corrupted traces on every query game; save the mean difference."""
    from gapscope.models import engine_for
    from gapscope.s2b import MAX_SEEDS
    from gapscope.steer import extract_direction

    with command_output("steer extract", json_out) as output:
        if seeds > MAX_SEEDS:
            output.fail(f"--seeds ({seeds}) exceeds the limit of {MAX_SEEDS}")
        if out.exists() and not out.is_dir():
            output.fail(f"--out {out} is a file; give a directory for the direction")
        try:
            config = resolve(preset, **parse_overrides(set_))
            vector = extract_direction(
                engine_for(model),
                model_id=model,
                config=config,
                preset=preset,
                seeds=list(range(first_seed, first_seed + seeds)),
                layers=layers,
                corruption=check_corruption(corruption),
            )
            vector.save(out)
        except (ConfigError, ValueError) as exc:
            output.fail(exc)
        except OSError as exc:
            output.fail(f"--out {out}: {exc.strerror or exc}")
        norms = ", ".join(f"{layer}: {norm:.3g}" for layer, norm in vector.card.norms.items())
        message = f"wrote {out} ({vector.card.pairs} pairs; layer norms {norms})"
        details = {
            "out": str(out),
            "fingerprint": vector.fingerprint,
            "card": vector.card.to_json(),
        }
        output.finish(
            View(details=details, show=lambda c: c.print(message, markup=False, soft_wrap=True))
        )


def run_steer(
    out: Annotated[Path, typer.Option(help="Directory for curve.csv/json, dosage.png/svg.")],
    preset: Annotated[str, typer.Option(help="S2B-LM preset.")] = "cat-10shot",
    seeds: Annotated[int, typer.Option(min=1, help="Episodes per condition (seed: 4).")] = 4,
    alphas: Annotated[
        str | None,
        typer.Option(
            help="Comma list of alphas (default: the diagnostic's steering grid: Figure 5 for "
            "s2b: -4 .. +1; Figures 6-7 for prove: -3, 0, +1)."
        ),
    ] = None,
    controls: Annotated[
        str | None,
        typer.Option(
            help="Comma list of control directions: orthogonal, random, or none (default: the "
            "diagnostic's: both for s2b, random for prove)."
        ),
    ] = None,
    model: Annotated[
        str, typer.Option(help="gapscope/embedded or gapscope/hf/<checkpoint>.")
    ] = EMBEDDED_MODEL,
    steer: Annotated[
        Path | None, typer.Option(help="Use this CLB direction instead of extracting one.")
    ] = None,
    diagnostic: Annotated[
        str,
        typer.Option(
            help="Any diagnostic whose spec declares a steering target: s2b (dosage curve), "
            "prove (transfer: -T dataset=FILE; seed: -T subset=aime -T n=32 -T k=1,8,32), or "
            "an installed one."
        ),
    ] = "s2b",
    task_args: TaskArgsOption = None,
    layers: Annotated[str, typer.Option(help="Layers when extracting.")] = "last-quarter",
    control_seed: Annotated[int, typer.Option(help="Seed of the control directions.")] = 0,
    max_tokens: Annotated[int, typer.Option(min=1, help="S2B tokens per game.")] = 256,
    corruption: CorruptionOption = DEFAULT_CORRUPTION,
    set_: Overrides = None,
    log_dir: Annotated[Path, typer.Option(help="Where the Inspect .eval logs go.")] = Path("logs"),
    json_out: JsonOut = False,
) -> None:
    """Dosage sweep: every direction at every alpha; curve, monotonicity, coherence, figure."""
    from gapscope.analysis import dosage_rows, print_dosage, spec_named
    from gapscope.app.sweep import SweepSpec, parse_alphas, run_sweep

    with command_output("run steer", json_out) as output:
        require_directory(log_dir, "--log-dir")
        refuse_overwriting(out, "--out", [("--steer", steer)] if steer else [])

        def run(tasks: list[Task], m: str) -> list[EvalLog]:
            logs = run_tasks(tasks, m, log_dir)
            output.logs.extend(log.location for log in logs)
            return logs

        try:
            chosen = (
                None
                if controls is None
                else tuple(c.strip() for c in controls.split(",") if c.strip() not in ("", "none"))
            )
            steered = spec_named(diagnostic).task_function()
            spec = SweepSpec(
                corruption=check_corruption(corruption),
                model=model,
                out=out,
                alphas=parse_alphas(alphas) if alphas else None,
                controls=chosen,
                control_seed=control_seed,
                steer=steer,
                diagnostic=diagnostic,
                preset=preset,
                seeds=seeds,
                layers=layers,
                max_tokens=max_tokens,
                overrides=parse_overrides(set_),
                task_args=parse_task_args(task_args, steered),
            )
            resolve(preset, **spec.overrides)
            result = run_sweep(spec, run)
        except Interrupted as stop:
            interrupted(output, stop)
        except (ConfigError, ValueError) as exc:
            output.fail(exc)
        except RuntimeError as exc:
            output.fail(exc, EXIT_RUN_FAILED)
        details = {
            "points": [asdict(p) for p in result.points],
            "trends": [asdict(t) for t in result.trends],
            "logs": result.logs,
            "files": result.files,
            "notes": result.notes,
        }
        target = spec.target.steering
        assert target is not None  # SweepSpec refuses a diagnostic without one
        rows = dosage_rows(spec.model, target, result.points, result.logs)

        def show(console: Console) -> None:
            print_dosage(result.points, result.trends, console)
            console.print(f"figure: {result.files['png']} and {result.files['svg']}")
            console.print(f"data: {result.files['csv']} and {result.files['json']}")

        output.finish(View(rows, details, show))
