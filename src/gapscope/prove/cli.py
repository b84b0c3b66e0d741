"""``gapscope run prove`` and ``gapscope prove report``: thin layers over the task and the
analysis."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from gapscope.clikit import fail, require_success, run_task
from gapscope.prove.coherence import Coherence

prove_app = typer.Typer(
    help="Whole-proof generation (miniF2F): pass@k and coherence reports over finished runs.",
    no_args_is_help=True,
)


def _ks(spec: str | None) -> list[int] | None:
    if spec is None:
        return None
    try:
        return [int(part) for part in spec.split(",") if part.strip()]
    except ValueError:
        raise typer.BadParameter(f"expected e.g. 1,8,32, got {spec!r}", param_hint="--k") from None


def run_prove(
    dataset: Annotated[
        str, typer.Option(help="miniF2F-style JSONL path or Hugging Face dataset id.")
    ],
    subset: Annotated[
        str,
        typer.Option(help="all | aime | amc | imo | competition | prefix:P | regex:R"),
    ] = "all",
    split: Annotated[str, typer.Option(help="Split to run (miniF2F: test or valid).")] = "test",
    model: Annotated[str, typer.Option(help="Any Inspect model string.")] = "gapscope/embedded",
    n: Annotated[int, typer.Option("-n", min=1, help="Attempts per problem (seed: 32).")] = 32,
    k: Annotated[str, typer.Option("--k", help="pass@k values to report, each <= n.")] = "1,8,32",
    lean: Annotated[
        str | None, typer.Option(help="Lean backend spec (default: configured).")
    ] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N problems.")] = None,
    max_tokens: Annotated[int, typer.Option(min=1, help="Tokens per attempt.")] = 4096,
    temperature: Annotated[float, typer.Option(help="Sampling temperature.")] = 1.0,
    steer: Annotated[
        str | None, typer.Option(help="Direction directory (gapscope steer extract) to steer with.")
    ] = None,
    alpha: Annotated[
        float, typer.Option(help="Steering strength; the seed's transfer test uses -3 and +1.")
    ] = 0.0,
    log_dir: Annotated[Path, typer.Option(help="Where the Inspect .eval logs go.")] = Path("logs"),
    json_out: Annotated[bool, typer.Option("--json", help="Summary as JSON on stdout.")] = False,
) -> None:
    """Generate n whole proofs per problem, check them with Lean, print pass@k and coherence."""
    from gapscope.lean.backend import LeanUnavailable
    from gapscope.prove.analysis import read_run, summarize
    from gapscope.prove.task import prove
    from gapscope.records import SourceError

    try:
        task = prove(
            dataset=dataset,
            subset=subset,
            split=split,
            n=n,
            k=k,
            lean=lean,
            limit=limit,
            max_tokens=max_tokens,
            temperature=temperature,
            steer=steer,
            alpha=alpha,
        )
    except (ValueError, SourceError, LeanUnavailable) as exc:
        fail(exc)
    log = run_task(task, model, log_dir)
    require_success(log)
    _emit([summarize(read_run(log))], json_out)


@prove_app.command("report")
def report(
    logs: Annotated[list[Path], typer.Argument(help="prove .eval logs, one per model.")],
    k: Annotated[
        str | None, typer.Option("--k", help="pass@k values, e.g. 1,8,32 (default: the run's).")
    ] = None,
    per_problem: Annotated[
        bool, typer.Option("--per-problem", help="Also a table of every problem's n, c, pass@k.")
    ] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Tables as JSON on stdout.")] = False,
) -> None:
    """pass@k (unbiased estimator, mean over problems) and coherence fractions per log."""
    from inspect_ai.log import read_eval_log

    from gapscope.prove.analysis import read_run, summarize

    ks = _ks(k)
    try:
        summaries = [summarize(read_run(read_eval_log(str(p))), ks) for p in logs]
    except (ValueError, FileNotFoundError, KeyError) as exc:
        fail(exc)
    _emit(summaries, json_out, per_problem)


def _emit(summaries: list[dict[str, Any]], json_out: bool, per_problem: bool = False) -> None:
    if json_out:
        typer.echo(json.dumps(summaries, indent=2))
        return
    console = Console()
    print_report(summaries, console)
    if per_problem:
        for s in summaries:
            print_problems(s, console)


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def print_report(summaries: list[dict[str, Any]], console: Console) -> None:
    """pass@k and coherence tables for a terminal."""
    ks = list(dict.fromkeys(k for s in summaries for k in s["pass_at_k"]))
    passk = Table(title="Whole-proof pass@k (unbiased, mean over problems)")
    for col in ("model", "problems", "attempts", "server errors"):
        passk.add_column(col, justify="left" if col == "model" else "right")
    for k in ks:
        passk.add_column(f"pass@{k}", justify="right")
    for s in summaries:
        passk.add_row(
            s["model"],
            str(s["problems"]),
            str(s["attempts"]),
            str(s["server_errors"]),
            *(_percent(s["pass_at_k"].get(k)) for k in ks),
        )
    console.print(passk)
    classes = [c.value for c in Coherence if c is not Coherence.SERVER_ERROR]
    coherence = Table(title="Coherence of attempts (server errors excluded)")
    coherence.add_column("model")
    for c in classes:
        coherence.add_column(c, justify="right")
    coherence.add_column("coherent", justify="right")
    for s in summaries:
        coherence.add_row(
            s["model"],
            *(f"{s['coherence'][c]} ({_percent(s['coherence_fraction'][c])})" for c in classes),
            _percent(s["coherent_fraction"]),
        )
    console.print(coherence)
    for s in summaries:
        for note in s["notes"]:
            console.print(f"[yellow]{s['model']}:[/yellow] {note}")


def print_problems(summary: dict[str, Any], console: Console) -> None:
    """One row per problem: checked attempts, proven attempts, pass@k (seed, Figure 6)."""
    ks = list(summary["pass_at_k"])
    table = Table(title=f"Per-problem pass@k: {summary['model']}")
    table.add_column("problem")
    for col in ("n", "c", *(f"pass@{k}" for k in ks)):
        table.add_column(col, justify="right")
    for p in summary["per_problem"]:
        table.add_row(
            p["name"], str(p["n"]), str(p["c"]), *(_percent(p["pass_at_k"][k]) for k in ks)
        )
    console.print(table)
