"""The ``gapscope`` command line: a thin layer over the Inspect tasks and the analysis code."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from gapscope.clikit import fail, require_success, run_task
from gapscope.ladder.cli import ladder_app, run_ladder
from gapscope.lean.cli import lean_app
from gapscope.onng.cli import onng_app, run_onng
from gapscope.prove.cli import prove_app, run_prove
from gapscope.s2b.config import ConfigError, S2BConfig, resolve
from gapscope.stats.cli import stats_app
from gapscope.steer.cli import run_steer, steer_app
from gapscope.verify.cli import verify_command

app = typer.Typer(
    help="gapscope: diagnose where a language model's mathematical reasoning breaks.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
run_app = typer.Typer(
    help="Run a diagnostic as an Inspect evaluation (logs open with `inspect view`).",
    no_args_is_help=True,
)
app.add_typer(run_app, name="run")
app.add_typer(stats_app, name="stats")
app.add_typer(ladder_app, name="ladder")
app.add_typer(lean_app, name="lean")
app.add_typer(prove_app, name="prove")
app.add_typer(onng_app, name="onng")
app.add_typer(steer_app, name="steer")
app.command("verify")(verify_command)
run_app.command("ladder")(run_ladder)
run_app.command("prove")(run_prove)
run_app.command("onng")(run_onng)
run_app.command("steer")(run_steer)

EMBEDDED_MODEL = "gapscope/embedded"


def parse_overrides(pairs: list[str]) -> dict[str, Any]:
    """``key=value`` pairs -> S2BConfig overrides, converted to each field's type."""
    defaults = S2BConfig()
    types = {f.name: type(getattr(defaults, f.name)) for f in dataclasses.fields(defaults)}
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise typer.BadParameter(f"expected key=value, got {pair!r}", param_hint="--set")
        if key not in types:
            raise typer.BadParameter(
                f"unknown parameter {key!r}; known: {', '.join(sorted(types))}",
                param_hint="--set",
            )
        try:
            out[key] = types[key](value)
        except ValueError:
            raise typer.BadParameter(
                f"{key} expects {types[key].__name__}, got {value!r}", param_hint="--set"
            ) from None
    return out


@run_app.command("s2b")
def run_s2b(
    preset: Annotated[
        str, typer.Option(help="scs-0shot | cat-0shot | cat-10shot (seed, Table 1) | demo")
    ] = "cat-10shot",
    seeds: Annotated[int, typer.Option(min=1, help="Number of episodes (the paper uses 4).")] = 4,
    listener: Annotated[
        str,
        typer.Option(help="lm (the model) | rule (verbalizer reference) | corrupted | random"),
    ] = "lm",
    model: Annotated[
        str, typer.Option(help="Any Inspect model string; ignored for rule/random listeners.")
    ] = EMBEDDED_MODEL,
    first_seed: Annotated[int, typer.Option(help="Seed of the first episode.")] = 0,
    max_tokens: Annotated[int, typer.Option(min=1, help="Generation budget per game.")] = 256,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", "-S", help="Override an episode parameter, e.g. -S k_shot=5."),
    ] = None,
    steer: Annotated[
        str | None, typer.Option(help="Direction directory (gapscope steer extract) to steer with.")
    ] = None,
    alpha: Annotated[float, typer.Option(help="Steering strength (0 = unsteered).")] = 0.0,
    log_dir: Annotated[Path, typer.Option(help="Where the Inspect .eval logs go.")] = Path("logs"),
    json_out: Annotated[
        bool, typer.Option("--json", help="Print a machine-readable summary on stdout.")
    ] = False,
) -> None:
    """Play S2B-LM episodes and report ZSCT and adj-ZSCT per seed and mean ± sd."""
    from gapscope.analysis.s2b import summarize
    from gapscope.s2b.task import LISTENERS, s2b_lm

    if listener not in LISTENERS:
        raise typer.BadParameter(f"choose one of {', '.join(LISTENERS)}", param_hint="--listener")
    overrides = parse_overrides(set_ or [])
    try:
        resolve(preset, **overrides)
    except ConfigError as exc:
        fail(exc)
    eval_model = model if listener == "lm" else "none"
    try:
        task = s2b_lm(
            preset=preset,
            seeds=seeds,
            first_seed=first_seed,
            listener=listener,
            max_tokens=max_tokens,
            steer=steer,
            alpha=alpha,
            **overrides,
        )
    except ValueError as exc:
        fail(exc)
    log = run_task(task, eval_model, log_dir)
    summary = summarize(log)
    if json_out:
        typer.echo(json.dumps(summary.to_dict(), indent=2))
    else:
        _print_s2b(summary.to_dict())
    require_success(log)


def _print_s2b(result: dict[str, Any]) -> None:
    console = Console()
    table = Table(title=f"S2B-LM {result['preset']} | listener {result['listener']}")
    for column in ("seed", "ZSCT", "adj-ZSCT", "ZSCT strict", "unparsed", "support acc"):
        table.add_column(column, justify="right")
    for row in result["per_seed"]:
        if "error" in row:
            table.add_row(str(row["seed"]), f"[red]{row['error']}[/red]", "", "", "", "")
            continue
        table.add_row(
            str(row["seed"]),
            f"{row['zsct']:.1f}",
            f"{row['adj_zsct']:.1f}",
            f"{row['zsct_strict']:.1f}",
            f"{row['unparsed']:.0f}",
            f"{row['support_acc']:.1f}",
        )
    s = result["summary"]
    if s:
        table.add_row(
            "mean ± sd",
            *(
                f"{s[k]['mean']:.1f} ± {s[k]['sd']:.1f}"
                for k in ("zsct", "adj_zsct", "zsct_strict", "unparsed", "support_acc")
            ),
        )
    console.print(table)
    console.print(f"model: {result['model']}  log: {result['log']}")


@app.command("episodes")
def episodes(
    out: Annotated[Path, typer.Option(help="Output JSONL file.")],
    preset: Annotated[str, typer.Option(help="Episode preset.")] = "cat-10shot",
    seed: Annotated[int, typer.Option(help="Episode seed.")] = 0,
    set_: Annotated[
        list[str] | None, typer.Option("--set", "-S", help="Override an episode parameter.")
    ] = None,
) -> None:
    """Export one S2B-LM episode as JSONL for audit (schema: docs/s2b.md)."""
    from gapscope.s2b.episode import build_episode
    from gapscope.s2b.export import write_jsonl

    try:
        config = resolve(preset, **parse_overrides(set_ or []))
        n = write_jsonl(build_episode(config, seed), out)
    except ConfigError as exc:
        fail(exc)
    typer.echo(f"wrote {n} games (+1 header) to {out}")


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
