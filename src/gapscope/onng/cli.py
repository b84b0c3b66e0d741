"""``gapscope onng render|report`` and ``gapscope run onng``.

The main CLI mounts ``onng_app`` as ``gapscope onng`` and ``run_onng`` as ``gapscope run onng``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from gapscope.clikit import fail, require_success, run_task
from gapscope.lean.executor_cli import ExecutorOption, RayActorsOption, RayAddressOption

onng_app = typer.Typer(
    help="O-NNG: render the obfuscated problem set, report over finished runs.",
    no_args_is_help=True,
)


@onng_app.command("render")
def render_command(
    lam: Annotated[float, typer.Option("--lam", min=0.0, max=1.0, help="Noise level.")] = 0.0,
    seed: Annotated[int, typer.Option("--seed", help="Renaming seed.")] = 0,
    out: Annotated[Path, typer.Option("--out", help="Output directory.")] = Path("onng"),
) -> None:
    """Write the Lean library, the renaming map and one prompt per problem."""
    from gapscope.onng.render import render

    typer.echo(json.dumps(render(lam, seed, out), indent=2))


def run_onng(
    model: Annotated[str, typer.Option(help="Any Inspect model string.")] = "gapscope/embedded",
    lams: Annotated[
        str, typer.Option(help="Noise levels, comma-separated.")
    ] = "0,0.25,0.5,0.75,1.0",
    seed: Annotated[int, typer.Option(help="Renaming seed.")] = 0,
    modules: Annotated[str, typer.Option(help="all, or comma-separated module names.")] = "all",
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N problems.")] = None,
    lean: Annotated[
        str | None, typer.Option(help="Lean backend spec, e.g. local:DIR (default: configured).")
    ] = None,
    max_tokens: Annotated[int, typer.Option(min=1, help="Tokens per answer.")] = 8192,
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = None,
    ray_actors: RayActorsOption = None,
    log_dir: Annotated[Path, typer.Option(help="Where the Inspect .eval logs go.")] = Path("logs"),
    json_out: Annotated[bool, typer.Option("--json", help="Summary as JSON on stdout.")] = False,
) -> None:
    """Prove the Peano problem set under obfuscation at each noise level; print the report.

    Needs a Lean backend: without one it stops before asking the model anything and says what
    to install.
    """
    from gapscope.lean.backend import LeanUnavailable
    from gapscope.onng.analysis import records_from_log, summarize
    from gapscope.onng.task import onng

    try:
        task = onng(
            lams=lams,
            seed=seed,
            modules=modules,
            limit=limit,
            lean=lean,
            max_tokens=max_tokens,
            executor=executor,
            ray_address=ray_address,
            ray_actors=ray_actors,
        )
    except (ValueError, LeanUnavailable) as exc:
        fail(exc)
    log = run_task(task, model, log_dir)
    require_success(log)
    summary = summarize(records_from_log(log))
    if json_out:
        typer.echo(json.dumps(summary, indent=2))
    else:
        print_summary(summary, Console())


@onng_app.command("report")
def report_command(
    logs: Annotated[list[Path], typer.Argument(help="onng .eval logs (one or more models).")],
    json_out: Annotated[bool, typer.Option("--json", help="Summary as JSON on stdout.")] = False,
) -> None:
    """Correct rate and latency per model and lambda, ANOVA and Kruskal-Wallis across lambda."""
    from inspect_ai.log import read_eval_log

    from gapscope.onng.analysis import records_from_log, summarize

    try:
        records = [r for p in logs for r in records_from_log(read_eval_log(str(p)))]
    except (FileNotFoundError, KeyError, ValueError) as exc:
        fail(exc)
    summary = summarize(records)
    if json_out:
        typer.echo(json.dumps(summary, indent=2))
    else:
        print_summary(summary, Console())


def _fmt(value: Any, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}g}"


def print_summary(summary: dict[str, Any], console: Console) -> None:
    """The per-lambda table and the tests of each model."""
    for model, m in summary["models"].items():
        table = Table(title=f"O-NNG {model}")
        for col in ("lambda", "n", "correct rate", "mean s", "mean tokens", "parse"):
            table.add_column(col, justify="right")
        for row in m["by_lam"]:
            parse = ", ".join(f"{k} {v}" for k, v in row["parse_status"].items())
            table.add_row(
                f"{row['lam']:g}",
                str(row["n"]),
                _fmt(row["correct_rate"]),
                _fmt(row["mean_inference_s"]),
                _fmt(row["mean_output_tokens"], 4),
                parse,
            )
        console.print(table)
        tests = Table(title=f"{model}: effect of lambda")
        for col in ("outcome", "ANOVA F", "ANOVA p", "Kruskal H", "Kruskal p"):
            tests.add_column(col, justify="right")
        for outcome, t in m["tests"].items():
            a, k = t["anova"] or {}, t["kruskal"] or {}
            tests.add_row(
                outcome,
                _fmt(a.get("statistic")),
                _fmt(a.get("p_value")),
                _fmt(k.get("statistic")),
                _fmt(k.get("p_value")),
            )
        console.print(tests)
