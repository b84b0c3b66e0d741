"""``gapscope onng render|setup-lean|check|report`` and ``gapscope run onng``.

The main CLI mounts ``onng_app`` as ``gapscope onng`` and ``run_onng`` as ``gapscope run onng``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from gapscope.analysis import View
from gapscope.app.kit import (
    EMBEDDED_MODEL,
    EXIT_RUN_FAILED,
    JsonOut,
    command_output,
    read_or_fail,
    require_directory,
    run_diagnostic,
)
from gapscope.app.options import (
    AllowUnsandboxedOption,
    ExecutorOption,
    RayActorsOption,
    RayAddressOption,
)

if TYPE_CHECKING:
    from inspect_ai import Task

onng_app = typer.Typer(
    help="O-NNG: render the obfuscated problem set, check one answer, report over finished runs.",
    no_args_is_help=True,
)


@onng_app.command("render")
def render_command(
    lam: Annotated[float, typer.Option("--lam", min=0.0, max=1.0, help="Noise level.")] = 0.0,
    seed: Annotated[int, typer.Option("--seed", help="Renaming seed.")] = 0,
    out: Annotated[Path, typer.Option("--out", help="Output directory.")] = Path("onng"),
    json_out: JsonOut = False,
) -> None:
    """Write the Lean library, the renaming map and one prompt per problem."""
    from gapscope.onng import write_obfuscation

    require_directory(out, "--out")
    with command_output("onng render", json_out) as output:
        written = write_obfuscation(lam, seed, out)
        output.finish(View(details=written, show=lambda console: _print_written(written, console)))


def _print_written(written: dict[str, object], console: Console) -> None:
    for key, value in written.items():
        console.print(f"{key}: {value}", highlight=False)


@onng_app.command("setup-lean")
def setup_lean_command(
    directory: Annotated[Path, typer.Argument(help="Where to write the Lean workspace.")],
    force: Annotated[bool, typer.Option(help="Write into a non-empty directory.")] = False,
    json_out: JsonOut = False,
) -> None:
    """A Lean workspace (toolchain, REPL) with O-NNG's Peano library installed in it."""
    from gapscope.app.workspace_setup import write_and_explain
    from gapscope.onng import workspace_libraries

    write_and_explain("onng setup-lean", json_out, directory, workspace_libraries(), force=force)


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
    allow_unsandboxed: AllowUnsandboxedOption = False,
    json_out: JsonOut = False,
) -> None:
    """The verdict for one answer: the static checks (JSON, statement kept, allowed tactics)
    always, then Lean when a backend is configured. Exits 0 for valid, 1 otherwise."""
    from gapscope.lean import LeanUnavailable, open_checker
    from gapscope.onng import lean_check, load_problem_set, obfuscation, static_check

    problem_set = load_problem_set()
    by_name = {p.name: p for p in problem_set.problems}
    if problem not in by_name:
        raise typer.BadParameter(f"no problem {problem!r}", param_hint="--problem")
    with command_output("onng check", json_out) as out:
        try:
            reply = answer_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            out.fail(exc)
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
                backend = open_checker(lean, allow_unsandboxed=allow_unsandboxed)
            except (LeanUnavailable, ValueError) as exc:
                result["detail"] = f"static checks passed; Lean not run: {exc}".splitlines()[0]
            else:
                try:
                    verdict = lean_check(
                        backend, problem_set, obf, target, static.answer.code, timeout
                    )
                finally:
                    backend.close()
                result["status"] = result["lean"] = verdict.status.value
                result["detail"] = verdict.detail
                result["messages"] = [m.data for m in verdict.messages if m.severity == "error"]

        def show(console: Console) -> None:
            for key, value in result.items():
                console.print(f"{key}: {value}", highlight=False, markup=False)

        valid = result["status"] == "valid"
        out.finish(View((), result, show), code=0 if valid else EXIT_RUN_FAILED)


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
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = None,
    ray_actors: RayActorsOption = None,
    allow_unsandboxed: AllowUnsandboxedOption = False,
    log_dir: Annotated[Path, typer.Option(help="Where the Inspect .eval logs go.")] = Path("logs"),
    json_out: JsonOut = False,
) -> None:
    """Prove the Peano problem set under obfuscation at each noise level; print the report.

    Needs a Lean backend: without one it stops before asking the model anything and says what
    to install.
    """
    from gapscope.lean import LeanUnavailable

    def build() -> Task:
        from gapscope.onng import onng

        return onng(
            lams=lams,
            seed=seed,
            modules=modules,
            limit=limit,
            lean=lean,
            max_tokens=max_tokens,
            executor=executor,
            ray_address=ray_address,
            ray_actors=ray_actors,
            allow_unsandboxed=allow_unsandboxed,
        )

    run_diagnostic(
        "run onng",
        json_out,
        build,
        model=model,
        log_dir=log_dir,
        bad_input=(ValueError, LeanUnavailable),
    )


@onng_app.command("report")
def report_command(
    logs: Annotated[list[Path], typer.Argument(help="onng .eval logs (one or more models).")],
    json_out: JsonOut = False,
) -> None:
    """Correct rate and latency per model and lambda, ANOVA and Kruskal-Wallis across lambda."""
    from gapscope.analysis import onng, onng_view

    with command_output("onng report", json_out) as out:
        records = read_or_fail(out, lambda: [r for p in logs for r in onng.read(p)])
        out.logs.extend(str(p) for p in logs)
        out.finish(onng_view(onng.summarize(records)))
