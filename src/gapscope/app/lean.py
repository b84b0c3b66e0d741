"""``gapscope lean``: find the Lean tooling (doctor) and write a workspace for it (setup)."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from gapscope.analysis import View
from gapscope.app.kit import JsonOut, command_output
from gapscope.app.workspace_setup import write_and_explain
from gapscope.lean import (
    DEFAULT_REPL_REV,
    DEFAULT_TOOLCHAIN,
    ENV_SPEC,
    Finding,
    build_limits_finding,
    kimina_finding,
    parse_spec,
    project_findings,
    repl_limits_finding,
    sandbox_finding,
    tool_findings,
)

ENV_KIMINA_URL = "GAPSCOPE_KIMINA_URL"

lean_app = typer.Typer(
    help="Lean 4 checking: diagnose the toolchain, write a workspace.", no_args_is_help=True
)


def _configured() -> tuple[Path | None, str | None]:
    """Project and server named by $GAPSCOPE_LEAN, when it is set and well-formed."""
    spec = os.environ.get(ENV_SPEC, "").strip()
    try:
        kind, target = parse_spec(spec) if spec else ("", "")
    except ValueError:
        return None, None
    return (Path(target), None) if kind == "local" else (None, target or None)


@lean_app.command()
def doctor(
    project: Annotated[
        Path | None, typer.Option(help="Lean project to inspect (default: from $GAPSCOPE_LEAN).")
    ] = None,
    kimina_url: Annotated[
        str | None,
        typer.Option(
            help=f"kimina-lean-server URL to probe (or ${ENV_KIMINA_URL}).", envvar=ENV_KIMINA_URL
        ),
    ] = None,
    as_json: JsonOut = False,
) -> None:
    """Report lean, lake, elan, the sandbox, the toolchain, a REPL binary and a kimina server.

    Exits 0."""
    env_project, env_url = _configured()
    project = project or env_project
    kimina_url = kimina_url or env_url
    findings: list[Finding] = [
        *tool_findings(),
        sandbox_finding(),
        repl_limits_finding(),
        build_limits_finding(),
    ]
    findings += (
        project_findings(project)
        if project
        else [
            Finding(
                "project",
                False,
                "no project given",
                f"--project DIR or {ENV_SPEC}=local:DIR (create one: gapscope lean setup DIR)",
            )
        ]
    )
    findings.append(
        kimina_finding(kimina_url)
        if kimina_url
        else Finding(
            "kimina", False, "no server URL given", f"--kimina-url or {ENV_KIMINA_URL} (optional)"
        )
    )

    with command_output("lean doctor", as_json) as out:
        out.finish(findings_view(findings))


def findings_view(findings: list[Finding]) -> View:
    """What a doctor prints and emits: its findings, each a dict in the JSON details."""

    def show(console: Console) -> None:
        """One line per finding; a fix is printed once, whole (never wrapped: it is copied into
        a shell), and a later finding with the same fix points back to the first."""
        first_with: dict[str, str] = {}
        for f in findings:
            line = f"{'ok' if f.ok else 'missing':<8} {f.name}: {f.found}"
            console.print(line, highlight=False, markup=False, soft_wrap=True)
            if not f.fix:
                continue
            if f.fix in first_with:
                fix = f"the same fix as {first_with[f.fix]}"
            else:
                first_with[f.fix] = f.name
                fix = f.fix
            console.print(f"{'':<8} -> {fix}", highlight=False, markup=False, soft_wrap=True)

    return View(details=[dataclasses.asdict(f) for f in findings], show=show)


@lean_app.command()
def setup(
    directory: Annotated[Path, typer.Argument(help="Where to write the Lean workspace.")],
    library: Annotated[
        list[str] | None,
        typer.Option(
            help="NAME=FILE: install the Lean file FILE as library NAME (repeatable). "
            "O-NNG's own: gapscope onng setup-lean DIR."
        ),
    ] = None,
    force: Annotated[bool, typer.Option(help="Write into a non-empty directory.")] = False,
    toolchain: Annotated[str, typer.Option(help="lean-toolchain pin.")] = DEFAULT_TOOLCHAIN,
    repl_rev: Annotated[
        str, typer.Option(help="leanprover-community/repl revision (must match the toolchain).")
    ] = DEFAULT_REPL_REV,
    checker: Annotated[
        str,
        typer.Option(
            help="The kernel judge built into the workspace: comparator (leanprover's, at the "
            "commit built for v4.33.0-rc2) or none (docs/lean.md)."
        ),
    ] = "comparator",
    mathlib: Annotated[
        bool, typer.Option(help="Require Mathlib at the commit pinned for the toolchain.")
    ] = False,
    json_out: JsonOut = False,
) -> None:
    """Write lean-toolchain, lakefile.toml (REPL, comparator) and the given libraries; the
    commands it prints end with `gapscope lean selftest`, which decides whether verdicts
    from this workspace can be trusted."""
    libraries: dict[str, str] = {}
    for spec in library or []:
        name, sep, file = spec.partition("=")
        if not sep or not name or not file:
            raise typer.BadParameter(f"expected NAME=FILE, got {spec!r}", param_hint="--library")
        try:
            libraries[name] = Path(file).read_text(encoding="utf-8")
        except OSError as exc:
            raise typer.BadParameter(str(exc), param_hint="--library") from None
    write_and_explain(
        "lean setup",
        json_out,
        directory,
        libraries,
        force=force,
        toolchain=toolchain,
        repl_rev=repl_rev,
        checker=checker,
        mathlib=mathlib,
    )


@lean_app.command()
def selftest(
    project: Annotated[Path, typer.Argument(help="The Lean workspace to test.")],
    timeout_s: Annotated[float, typer.Option(help="Per-case wall-clock limit.")] = 120.0,
    allow_unsandboxed: Annotated[
        bool, typer.Option(help="Run where bubblewrap does not work (not recommended).")
    ] = False,
    as_json: JsonOut = False,
) -> None:
    """Run the known-answer cases through this workspace's REPL and kernel checker.

    Until it passes, local Lean runs refuse to start. Exits 0 if every case gave its known
    answer, 1 otherwise, 2 if the workspace cannot be opened."""
    from gapscope.app.workspace_setup import program_probes
    from gapscope.lean import LeanUnavailable, selftest_workspace

    with command_output("lean selftest", as_json) as out:
        try:
            result = selftest_workspace(
                project,
                allow_unsandboxed=allow_unsandboxed,
                timeout_s=timeout_s,
                probes=program_probes(),
            )
        except (LeanUnavailable, ValueError) as exc:
            out.fail(exc)

        def show(console: Console) -> None:
            for r in result.results:
                mark = {True: "ok", False: "FAIL", None: "known-miss"}[r.ok]
                line = f"{mark:<10} {r.path:<20} {r.case:<28} {r.status}"
                console.print(line, markup=False, highlight=False, soft_wrap=True)
            verdict = "passed" if result.passed else f"FAILED ({len(result.failures)} cases)"
            console.print(f"self-test {verdict}; recorded in {result.record}", markup=False)

        details = {
            "passed": result.passed,
            "record": str(result.record),
            "results": [dataclasses.asdict(r) for r in result.results],
        }
        out.finish(
            View(details=details, show=show),
            code=0 if result.passed else 1,
            error=None if result.passed else "the Lean self-test failed",
        )
