"""``gapscope t2 mine PROJECT --out records.jsonl``: T2's dataset pipeline on a Lean 4 project.

Registered on ``gapscope t2`` by ``gapscope.app.t2``. The steps live in
``gapscope.t2.mining``; this module checks the input, runs them with progress, writes the
files and shows the funnel.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gapscope.analysis import View
from gapscope.app.kit import JsonOut, Output, command_output, open_model, refuse_overwriting
from gapscope.app.options import AllowUnsandboxedOption, ExecutorOption, RayAddressOption

if TYPE_CHECKING:
    from rich.console import Console

    from gapscope.t2 import Mined, OutputPaths, Trace, TraceConfig

LAKEFILES = ("lakefile.lean", "lakefile.toml")
TRACERS = ("auto", "gapscope", "leandojo")


def _check_project(out: Output, project: Path) -> Path:
    if not project.is_dir():
        out.fail(f"PROJECT {project}: not a directory")
    if not any((project / name).is_file() for name in LAKEFILES):
        out.fail(f"PROJECT {project}: not a Lake project (no {' or '.join(LAKEFILES)})")
    return project.resolve()


def _print_funnel(mined: Mined, trace: Trace, files: dict[str, Path], console: Console) -> None:
    from rich.table import Table

    table = Table(title=f"T2 mining funnel (traced by {trace.tracer})")
    table.add_column("stage")
    table.add_column("left", justify="right")
    for stage, count in mined.funnel.items():
        table.add_row(stage, str(count))
    console.print(table)
    prop = sum(t.is_prop for t in mined.targets)
    console.print(f"Hard (Prop-typed, from Lean) targets: {prop} of {len(mined.targets)}")
    for module, why in sorted(trace.failed.items()):
        console.print(f"not traced: {module}: {why}", markup=False, highlight=False)
    for what, path in files.items():
        console.print(f"{what}: {path}", markup=False, highlight=False)


def mine_command(
    project: Annotated[Path, typer.Argument(help="The Lean 4 (lake) project to mine.")],
    out: Annotated[Path, typer.Option(help="Where the records go (JSONL, T2's nine fields).")],
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing --out.")] = False,
    min_successors: Annotated[
        int, typer.Option(min=0, help="Keep targets with at least this many successors (paper: 2).")
    ] = 2,
    min_depth: Annotated[
        int,
        typer.Option(
            min=0, help="Keep targets whose dependents chain this deep (paper: distance > 1, 2)."
        ),
    ] = 2,
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = None,
    workers: Annotated[
        int, typer.Option(min=1, help="Lean processes tracing at once (local executor).")
    ] = 2,
    batch_size: Annotated[
        int, typer.Option(min=1, help="Modules per Lean process (one import each).")
    ] = 16,
    build_timeout: Annotated[
        float, typer.Option(min=1.0, help="Seconds for lake build of the project.")
    ] = 3600.0,
    batch_timeout: Annotated[
        float, typer.Option(min=1.0, help="Seconds for tracing one batch of modules.")
    ] = 1800.0,
    allow_unsandboxed: AllowUnsandboxedOption = False,
    tracer: Annotated[
        str,
        typer.Option(
            help="auto (LeanDojo, the paper's tool, when installed; else gapscope's Lean "
            "metaprogram), gapscope or leandojo."
        ),
    ] = "auto",
    nl_model: Annotated[
        str | None,
        typer.Option(help="Describe each target in natural language with this Inspect model."),
    ] = None,
    nl_prompt: Annotated[
        Path | None,
        typer.Option(help="User-turn template for --nl-model (default: the shipped one)."),
    ] = None,
    json_out: JsonOut = False,
) -> None:
    """Trace PROJECT with Lean, keep the paper's targets, write T2 records and the funnel.

    Writes --out, its prop/noprop split (Lean's Hard tag) and, with --nl-model, T2's
    informalization file; the trace is cached next to --out and reused while the project's
    sources are unchanged.
    """
    from gapscope.lean import (
        EXECUTORS,
        LeanUnavailable,
        decide_sandbox,
        sandbox_choice,
        unsandboxed_allowed,
    )
    from gapscope.t2 import (
        OutputPaths,
        TraceConfig,
        TraceError,
        require_lake,
        write_nl,
        write_records,
    )

    with command_output("t2 mine", json_out) as output:
        root = _check_project(output, project)
        paths = OutputPaths.of(out)
        if not force:
            existing = [str(p) for p in paths.written() if p.exists()]
            if existing:
                verb = "exists" if len(existing) == 1 else "exist"
                output.fail(
                    f"--out: {', '.join(existing)} already {verb}; pass --force to overwrite"
                )
        inputs = [("--nl-prompt", nl_prompt)] if nl_prompt is not None else []
        for written in paths.written():
            refuse_overwriting(written, "--out", inputs)
        if executor not in EXECUTORS:
            output.fail(f"--executor must be one of {', '.join(EXECUTORS)}, got {executor!r}")
        if tracer not in TRACERS:
            output.fail(f"--tracer must be one of {', '.join(TRACERS)}, got {tracer!r}")
        try:
            require_lake(("lake",))
            sandboxed = decide_sandbox(
                sandbox_choice(), unsandboxed_allowed(allow_unsandboxed), "the project's Lean code"
            )
            config = TraceConfig(
                root,
                sandboxed=sandboxed,
                build_timeout_s=build_timeout,
                batch_timeout_s=batch_timeout,
                batch_size=batch_size,
                workers=workers,
            )
            user_template = _nl_template(nl_prompt) if nl_model else None
            if nl_model:
                open_model(nl_model)  # a model the provider cannot open fails before tracing
            trace = _trace(
                config, paths, tracer, executor, ray_address, unsandboxed_allowed(allow_unsandboxed)
            )
        except (LeanUnavailable, TraceError, ValueError) as exc:
            output.fail(exc)
        mined = _mine(trace, root, min_successors, min_depth)
        write_records(paths, mined.targets)
        nl: dict[str, Any] | None = None
        if nl_model and user_template is not None:
            nl = {"model": nl_model} | _describe(mined, nl_model, user_template, paths)
            write_nl(paths.nl, nl.pop("descriptions"))
            if not nl["failures"]:
                paths.nl_journal.unlink(missing_ok=True)  # complete: nothing to resume
        else:
            # with --force: an earlier run's descriptions do not describe these records
            paths.nl.unlink(missing_ok=True)
        output.finish(_view(root, paths, trace, mined, nl))


def _nl_template(path: Path | None) -> str:
    from gapscope.t2 import read_prompt

    try:
        return read_prompt(path)
    except OSError as exc:
        raise ValueError(f"--nl-prompt {path}: {exc.strerror or exc}") from None


def _trace(
    config: TraceConfig,
    paths: OutputPaths,
    tracer: str,
    executor: str,
    ray_address: str | None,
    allow_unsandboxed: bool,
) -> Trace:
    """LeanDojo's trace where it is asked for or installed, gapscope's otherwise. LeanDojo
    runs ``lake`` and Lean itself, outside gapscope's sandbox: where the sandbox is in force
    it needs ``--allow-unsandboxed`` (``auto`` then uses gapscope's tracer, and says so)."""
    from gapscope.app.kit import err_console
    from gapscope.lean import progress_bar
    from gapscope.t2 import (
        leandojo_available,
        run_local,
        run_ray,
        trace_project,
        trace_with_leandojo,
    )

    paths.trace.parent.mkdir(parents=True, exist_ok=True)
    if tracer == "leandojo" and not leandojo_available():
        raise ValueError("--tracer leandojo: lean_dojo is not installed (pip install lean-dojo)")
    sandbox_only = config.sandboxed and not allow_unsandboxed
    if tracer == "leandojo" and sandbox_only:
        raise ValueError(
            "--tracer leandojo: LeanDojo runs lake and Lean outside gapscope's sandbox; pass"
            " --allow-unsandboxed to let it, or use --tracer gapscope (sandboxed)"
        )
    if tracer == "auto" and leandojo_available() and sandbox_only:
        err_console.print(
            "LeanDojo is installed but runs outside gapscope's sandbox: tracing with gapscope's"
            " metaprogram (--allow-unsandboxed lets LeanDojo trace)",
            highlight=False,
        )
    elif tracer == "leandojo" or (tracer == "auto" and leandojo_available()):
        err_console.print(f"tracing {config.project} with LeanDojo", highlight=False)
        return trace_with_leandojo(config.project, paths.trace)
    return trace_project(
        config,
        paths.trace,
        run_ray(ray_address) if executor == "ray" else run_local,
        progress=lambda total: progress_bar(total, None, "tracing module batches"),
        say=lambda message: err_console.print(message, markup=False, highlight=False),
    )


def _mine(trace: Trace, root: Path, min_successors: int, min_depth: int) -> Mined:
    from gapscope.t2 import Filters, RepoSuccessors, mine_targets, project_modules

    def read(path: str) -> str | None:
        try:
            return (root / path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    return mine_targets(
        trace.declarations,
        project_modules(root),
        read,
        root.name,
        Filters(min_successors=min_successors, min_depth=min_depth),
        successors_of=RepoSuccessors(root),
    )


def _describe(mined: Mined, model: str, user_template: str, paths: OutputPaths) -> dict[str, Any]:
    from gapscope.lean import progress_bar
    from gapscope.t2 import Journal, informalize

    records = [t.record for t in mined.targets]
    journal = Journal(paths.nl_journal)
    with progress_bar(len(records), None, "describing targets") as advance:
        done = informalize(records, model, user_template, advance=advance, journal=journal)
    return {
        "described": len(done.descriptions),
        "reused": done.reused,
        "failures": done.failures,
        "descriptions": done.descriptions,
    }


def _view(
    root: Path, paths: OutputPaths, trace: Trace, mined: Mined, nl: dict[str, Any] | None
) -> View:
    files = {"records": paths.records, "prop": paths.prop, "noprop": paths.noprop}
    files |= {"trace": paths.trace} | ({"nl": paths.nl} if nl is not None else {})
    details = {
        "project": str(root),
        "files": {k: str(v) for k, v in files.items()},
        "funnel": mined.funnel,
        "hard": sum(t.is_prop for t in mined.targets),
        "trace": {
            "tracer": trace.tracer,
            "key": trace.key,
            "modules": len(trace.modules),
            "failed": trace.failed,
            "batches_traced": trace.traced_now,
            "build_error": trace.build_error,
        },
        "targets": [
            {
                "id": t.record.id,
                "module": t.module,
                "prop": t.is_prop,
                "successors": t.successors,
                "depth": t.depth,
            }
            for t in mined.targets
        ],
        "dropped": mined.dropped,
        "nl": nl,
    }
    notes = [f"{len(trace.failed)} module(s) could not be traced"] if trace.failed else []
    if trace.build_error is not None:
        notes.append(f"{trace.build_error} (the modules it left unbuilt are listed as failed)")
    if trace.tracer == "leandojo":
        notes.append(
            "traced by LeanDojo: it builds and schedules by itself (--executor, --workers, "
            "--batch-size do not apply) and its Hard tag is the theorem/lemma keyword"
        )
    if nl is not None and nl["failures"]:
        notes.append(f"{len(nl['failures'])} target(s) got no description from {nl['model']}")
    return View((), details, lambda console: _print_funnel(mined, trace, files, console), notes)
