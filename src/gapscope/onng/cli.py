"""``gapscope onng render|report`` and ``gapscope run onng``.

The main CLI mounts ``onng_app`` as ``gapscope onng`` and ``run_onng`` as ``gapscope run onng``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from gapscope.clikit import (
    EMBEDDED_MODEL,
    Result,
    command_output,
    read_or_fail,
    require_directory,
    run_diagnostic,
)

if TYPE_CHECKING:
    from inspect_ai import Task
    from inspect_ai.log import EvalLog

    from gapscope.analysis.onng import ONNGSummary

onng_app = typer.Typer(
    help="O-NNG: render the obfuscated problem set, report over finished runs.",
    no_args_is_help=True,
)


def _result(summary: ONNGSummary) -> Result:
    from gapscope.analysis.terminal import print_onng

    return Result(summary.rows(), summary.to_dict(), lambda console: print_onng(summary, console))


@onng_app.command("render")
def render_command(
    lam: Annotated[float, typer.Option("--lam", min=0.0, max=1.0, help="Noise level.")] = 0.0,
    seed: Annotated[int, typer.Option("--seed", help="Renaming seed.")] = 0,
    out: Annotated[Path, typer.Option("--out", help="Output directory.")] = Path("onng"),
    json_out: Annotated[bool, typer.Option("--json", help="Envelope as JSON on stdout.")] = False,
) -> None:
    """Write the Lean library, the renaming map and one prompt per problem."""
    from gapscope.onng.render import render

    require_directory(out, "--out")
    with command_output("onng render", json_out) as output:
        written = render(lam, seed, out)
        output.finish(
            Result(details=written, show=lambda console: _print_written(written, console))
        )


def _print_written(written: dict[str, object], console: Console) -> None:
    for key, value in written.items():
        console.print(f"{key}: {value}", highlight=False)


def run_onng(
    model: Annotated[str, typer.Option(help="Any Inspect model string.")] = EMBEDDED_MODEL,
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
    log_dir: Annotated[Path, typer.Option(help="Where the Inspect .eval logs go.")] = Path("logs"),
    json_out: Annotated[bool, typer.Option("--json", help="Envelope as JSON on stdout.")] = False,
) -> None:
    """Prove the Peano problem set under obfuscation at each noise level; print the report.

    Needs a Lean backend: without one it stops before asking the model anything and says what
    to install.
    """
    from gapscope.lean.backend import LeanUnavailable

    def build() -> Task:
        from gapscope.onng.task import onng

        return onng(
            lams=lams, seed=seed, modules=modules, limit=limit, lean=lean, max_tokens=max_tokens
        )

    def summarise(log: EvalLog) -> Result:
        from gapscope.analysis.onng import records_from_log, summarize

        return _result(summarize(records_from_log(log)))

    with command_output("run onng", json_out) as out:
        run_diagnostic(
            out,
            build=build,
            model=model,
            log_dir=log_dir,
            summarise=summarise,
            bad_input=(ValueError, LeanUnavailable),
        )


@onng_app.command("report")
def report_command(
    logs: Annotated[list[Path], typer.Argument(help="onng .eval logs (one or more models).")],
    json_out: Annotated[bool, typer.Option("--json", help="Envelope as JSON on stdout.")] = False,
) -> None:
    """Correct rate and latency per model and lambda, ANOVA and Kruskal-Wallis across lambda."""
    from gapscope.analysis import onng

    with command_output("onng report", json_out) as out:
        records = read_or_fail(out, lambda: [r for p in logs for r in onng.read(p)])
        out.logs.extend(str(p) for p in logs)
        out.finish(_result(onng.summarize(records)))
