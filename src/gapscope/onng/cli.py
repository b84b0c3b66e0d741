"""``gapscope onng render|check|report`` and ``gapscope run onng``.

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
    help="O-NNG: render the obfuscated problem set, check one answer, report over finished runs.",
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


@onng_app.command("setup-lean")
def setup_lean_command(
    directory: Annotated[Path, typer.Argument(help="Where to write the Lean workspace.")],
    force: Annotated[bool, typer.Option(help="Write into a non-empty directory.")] = False,
) -> None:
    """A Lean workspace (toolchain, REPL) with O-NNG's Peano library installed in it."""
    from gapscope.lean.cli import write_and_explain
    from gapscope.onng.render import workspace_libraries

    write_and_explain(directory, workspace_libraries(), force=force)


@onng_app.command("check")
def check_command(
    answer_file: Annotated[
        Path, typer.Argument(help="The model's reply: JSON with draft and code (any key case).")
    ],
    problem: Annotated[str, typer.Option("--problem", help="Problem name (original).")],
    lam: Annotated[float, typer.Option("--lam", min=0.0, max=1.0, help="Noise level.")] = 0.0,
    seed: Annotated[int, typer.Option("--seed", help="Renaming seed.")] = 0,
    lean: Annotated[
        str | None, typer.Option(help="Lean backend spec (default: $GAPSCOPE_LEAN, if set).")
    ] = None,
    timeout: Annotated[float, typer.Option(min=1.0, help="Lean check limit, seconds.")] = 60.0,
    json_out: Annotated[bool, typer.Option("--json", help="Verdict as JSON on stdout.")] = False,
) -> None:
    """The verdict for one answer: the static checks (JSON, statement kept, allowed tactics)
    always, then Lean when a backend is configured. Exits 0 for valid, 1 otherwise."""
    from gapscope.lean import open_backend
    from gapscope.lean.backend import LeanUnavailable
    from gapscope.onng.checking import lean_check, static_check
    from gapscope.onng.problemset import load_problem_set
    from gapscope.onng.render import obfuscation

    problem_set = load_problem_set()
    by_name = {p.name: p for p in problem_set.problems}
    if problem not in by_name:
        raise typer.BadParameter(f"no problem {problem!r}", param_hint="--problem")
    try:
        reply = answer_file.read_text(encoding="utf-8")
    except OSError as exc:
        fail(exc)
    target = by_name[problem]
    obf = obfuscation(problem_set, lam, seed)
    static = static_check(problem_set, obf, target, reply)
    result: dict[str, Any] = {
        "problem": problem,
        "lam": lam,
        "seed": seed,
        "parse_status": static.answer.status.value,
        "status": static.status,
        "detail": static.detail,
        "lean": None,
    }
    if static.needs_lean:
        try:
            backend = open_backend(lean)
        except (LeanUnavailable, ValueError) as exc:
            result["detail"] = f"static checks passed; Lean not run: {exc}".splitlines()[0]
        else:
            try:
                verdict = lean_check(backend, problem_set, obf, target, static.answer.code, timeout)
            finally:
                backend.close()
            result["status"] = result["lean"] = verdict.status.value
            result["detail"] = verdict.detail
            result["messages"] = [m.data for m in verdict.messages if m.severity == "error"]
    if json_out:
        typer.echo(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        for key, value in result.items():
            typer.echo(f"{key}: {value}")
    raise typer.Exit(0 if result["status"] == "valid" else 1)


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
        for col in ("lambda", "n", "correct rate", "mean s", "mean tokens", "parse", "verdicts"):
            table.add_column(col, justify="right")
        for row in m["by_lam"]:
            parse = ", ".join(f"{k} {v}" for k, v in row["parse_status"].items())
            verdicts = ", ".join(f"{k} {v}" for k, v in row["verdicts"].items())
            table.add_row(
                f"{row['lam']:g}",
                str(row["n"]),
                _fmt(row["correct_rate"]),
                _fmt(row["mean_inference_s"]),
                _fmt(row["mean_output_tokens"], 4),
                parse,
                verdicts,
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
