"""``gapscope steer extract`` and ``gapscope run steer``: thin layers over extraction and the
grid. Kept apart from ``gapscope.cli`` so the commands can move with a CLI restructuring."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from gapscope.analysis.profile import GapRow
from gapscope.clikit import (
    EXIT_RUN_FAILED,
    Interrupted,
    JsonOut,
    Result,
    command_output,
    interrupted,
    require_directory,
    run_task,
)
from gapscope.s2b.config import ConfigError, resolve

if TYPE_CHECKING:  # Inspect and torch load only when a command runs
    from inspect_ai import Task
    from inspect_ai.log import EvalLog

    from gapscope.steer.sweep import SweepResult, SweepSpec

steer_app = typer.Typer(
    help="Activation steering: extract the CLB direction (CAA) from S2B-LM trace pairs.",
    no_args_is_help=True,
)

EMBEDDED = "gapscope/embedded"
Overrides = Annotated[
    list[str] | None,
    typer.Option("--set", "-S", help="Override an episode parameter, e.g. -S query_size=4."),
]


def _overrides(pairs: list[str] | None) -> dict[str, Any]:
    from gapscope.s2b.cli import parse_overrides

    return parse_overrides(pairs or [])


@steer_app.command("extract")
def extract(
    out: Annotated[Path, typer.Option(help="Direction directory to write.")],
    preset: Annotated[str, typer.Option(help="S2B-LM preset of the pair episodes.")] = (
        "cat-10shot"
    ),
    seeds: Annotated[int, typer.Option(min=1, help="Episodes to draw pairs from.")] = 4,
    first_seed: Annotated[int, typer.Option(help="Seed of the first episode.")] = 0,
    model: Annotated[
        str, typer.Option(help="gapscope/embedded or gapscope/hf/<checkpoint> (local weights).")
    ] = EMBEDDED,
    layers: Annotated[
        str, typer.Option(help="last-quarter (seed default) | all | 20,21,...")
    ] = "last-quarter",
    batch_size: Annotated[int, typer.Option(min=1, help="Sequences per forward pass.")] = 8,
    set_: Overrides = None,
    json_out: JsonOut = False,
) -> None:
    """Teacher-force correct vs corrupted traces on every query game; save the mean difference."""
    from gapscope.s2b.task import MAX_SEEDS
    from gapscope.steer.extract import extract_direction
    from gapscope.steer.task import engine_for

    with command_output("steer extract", json_out) as output:
        if seeds > MAX_SEEDS:
            output.fail(f"--seeds ({seeds}) exceeds the limit of {MAX_SEEDS}")
        if out.exists() and not out.is_dir():
            output.fail(f"--out {out} is a file; give a directory for the direction")
        try:
            config = resolve(preset, **_overrides(set_))
            vector = extract_direction(
                engine_for(model),
                model_id=model,
                config=config,
                preset=preset,
                seeds=list(range(first_seed, first_seed + seeds)),
                layers=layers,
                batch_size=batch_size,
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
            Result(details=details, show=lambda c: c.print(message, markup=False, soft_wrap=True))
        )


def run_steer(
    out: Annotated[Path, typer.Option(help="Directory for curve.csv/json, dosage.png/svg.")],
    preset: Annotated[str, typer.Option(help="S2B-LM preset.")] = "cat-10shot",
    seeds: Annotated[int, typer.Option(min=1, help="Episodes per condition (seed: 4).")] = 4,
    alphas: Annotated[
        str, typer.Option(help="Comma list of alphas (seed, Figure 5: -4 .. +1).")
    ] = "-4,-3,-2,-1,0,1",
    controls: Annotated[
        str, typer.Option(help="Comma list of control directions: orthogonal, random, or none.")
    ] = "orthogonal,random",
    model: Annotated[
        str, typer.Option(help="gapscope/embedded or gapscope/hf/<checkpoint>.")
    ] = EMBEDDED,
    steer: Annotated[
        Path | None, typer.Option(help="Use this CLB direction instead of extracting one.")
    ] = None,
    diagnostic: Annotated[str, typer.Option(help="s2b (dosage curve) | prove (transfer).")] = (
        "s2b"
    ),
    dataset: Annotated[
        str | None, typer.Option(help="prove: miniF2F-style JSONL or hub id.")
    ] = None,
    subset: Annotated[str, typer.Option(help="prove: problem subset (seed: aime).")] = "aime",
    n: Annotated[int, typer.Option("-n", min=1, help="prove: attempts per problem.")] = 32,
    k: Annotated[str, typer.Option("--k", help="prove: pass@k values.")] = "1,8,32",
    lean: Annotated[str | None, typer.Option(help="prove: Lean backend spec.")] = None,
    layers: Annotated[str, typer.Option(help="Layers when extracting.")] = "last-quarter",
    control_seed: Annotated[int, typer.Option(help="Seed of the control directions.")] = 0,
    max_tokens: Annotated[int, typer.Option(min=1, help="S2B tokens per game.")] = 256,
    set_: Overrides = None,
    log_dir: Annotated[Path, typer.Option(help="Where the Inspect .eval logs go.")] = Path("logs"),
    json_out: JsonOut = False,
) -> None:
    """Dosage sweep: every direction at every alpha; curve, monotonicity, coherence, figure."""
    from gapscope.steer.sweep import SweepSpec, parse_alphas, run_sweep

    with command_output("run steer", json_out) as output:
        require_directory(log_dir, "--log-dir")

        def run(task: Task, m: str) -> EvalLog:
            log = run_task(task, m, log_dir)
            output.logs.append(log.location)
            return log

        try:
            chosen = tuple(c.strip() for c in controls.split(",") if c.strip() not in ("", "none"))
            prove_args: dict[str, Any] = {}
            if diagnostic == "prove":
                prove_args = {"dataset": dataset, "subset": subset, "n": n, "k": k, "lean": lean}
                prove_args = {key: v for key, v in prove_args.items() if v is not None}
            spec = SweepSpec(
                model=model,
                out=out,
                alphas=parse_alphas(alphas),
                controls=chosen,
                control_seed=control_seed,
                steer=steer,
                diagnostic=diagnostic,  # type: ignore[arg-type]
                preset=preset,
                seeds=seeds,
                layers=layers,
                max_tokens=max_tokens,
                overrides=_overrides(set_),
                prove_args=prove_args,
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
        output.finish(Result(_rows(spec, result), details, lambda c: _print(result, c)))


def _rows(spec: SweepSpec, result: SweepResult) -> list[GapRow]:
    """One gap-profile row per condition of the grid: its mean metric with the bootstrap CI."""
    metric = "ZSCT" if spec.diagnostic == "s2b" else "pass@k"
    return [
        GapRow(
            model=spec.model,
            diagnostic="steering",
            metric=f"{metric} [{p.direction}, alpha={p.alpha:g}]",
            value=p.mean,
            ci=(p.ci_low, p.ci_high),
            n=p.n,
            log=result.logs.get(f"{p.direction}@{p.alpha:g}", ""),
            unit="%" if spec.diagnostic == "s2b" else "",
        )
        for p in result.points
    ]


def _print(result: SweepResult, console: Console) -> None:
    table = Table(title="Dosage curve (mean ± sd over units, 95% bootstrap CI)")
    for column in ("direction", "alpha", "n", "mean ± sd", "95% CI", "incoherent", "extra"):
        table.add_column(column, justify="left" if column == "direction" else "right")
    for p in result.points:
        table.add_row(
            p.direction,
            f"{p.alpha:g}",
            str(p.n),
            f"{p.mean:.3g} ± {p.sd:.2g}",
            f"[{p.ci_low:.3g}, {p.ci_high:.3g}]",
            f"{100 * p.incoherent:.1f}%",
            " ".join(f"{k} {v:.3g}" for k, v in p.extra.items()),
        )
    console.print(table)
    trends = Table(title="Monotonicity (baseline included)")
    for column in ("direction", "Spearman rho", "slope", "slope 95% CI", "points"):
        trends.add_column(column, justify="left" if column == "direction" else "right")
    for t in result.trends:
        rho = "n/a (constant)" if t.rho is None else f"{t.rho:.3f}"
        trends.add_row(
            t.direction,
            rho,
            f"{t.slope:.3g}",
            f"[{t.slope_low:.3g}, {t.slope_high:.3g}]",
            str(t.points),
        )
    console.print(trends)
    console.print(f"figure: {result.files['png']} and {result.files['svg']}")
    console.print(f"data: {result.files['csv']} and {result.files['json']}")
