"""``gapscope run t2`` and ``gapscope t2 audit``.

The main CLI mounts ``t2_app`` as ``gapscope t2`` and ``run_t2`` as ``gapscope run t2``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from gapscope.analysis import View
from gapscope.app.kit import EMBEDDED_MODEL, JsonOut, command_output, run_diagnostic
from gapscope.app.options import (
    AllowUnsandboxedOption,
    ExecutorOption,
    RayActorsOption,
    RayAddressOption,
)

if TYPE_CHECKING:
    from inspect_ai import Task

MinSuccessorsOption = Annotated[
    int,
    typer.Option(
        min=0, help="Skip records with fewer successors (declarations using the target; paper: 2)."
    ),
]

t2_app = typer.Typer(help="T2 testing accuracy: audit records for defects.", no_args_is_help=True)


@t2_app.command("audit")
def audit_command(
    data: Annotated[str, typer.Argument(help="T2 records: JSONL path or Hugging Face id.")],
    repo: Annotated[
        Path | None, typer.Option(help="Check targets against this Lean project's files.")
    ] = None,
    min_successors: MinSuccessorsOption = 2,
    json_out: JsonOut = False,
) -> None:
    """Count the records of each defect class, list the offending ids, show the funnel."""
    from gapscope.analysis import print_t2_audit
    from gapscope.records import SourceError
    from gapscope.t2 import (
        RepoSuccessors,
        audit_records,
        file_text_of,
        load_records,
        record_successors,
        successor_profile,
    )

    with command_output("t2 audit", json_out) as out:
        try:
            loaded = load_records(data)
        except SourceError as exc:
            out.fail(exc)
        counted = RepoSuccessors(repo) if repo is not None else record_successors
        result = audit_records(
            loaded.records,
            loaded.problems,
            (lambda r: file_text_of(repo, r)) if repo is not None else None,
            min_successors=min_successors,
            successors_of=counted,
        )
        profile = successor_profile(loaded.records, counted)

        out.finish(
            View(
                (),
                result.to_dict() | {"successors": profile},
                lambda console: print_t2_audit(data, result, profile, console),
            )
        )


def run_t2(
    data: Annotated[str, typer.Option(help="T2 records: JSONL path or Hugging Face id.")],
    context: Annotated[
        str, typer.Option(help="all | nl+st | nl | st | none, or a comma list (paper: all four).")
    ] = "all",
    nl: Annotated[
        list[Path] | None,
        typer.Option(
            help="T2's informalization output (results_merged.json) or id -> NL; repeatable"
            " (default: the records' natural_language, noted in the report)."
        ),
    ] = None,
    lean: Annotated[
        str | None, typer.Option(help="Lean backend spec, e.g. local:DIR (default: configured).")
    ] = None,
    ground_truth: Annotated[
        bool, typer.Option("--ground-truth", help="Evaluate the records' own targets (no model).")
    ] = False,
    exclude: Annotated[
        Path | None,
        typer.Option(help="Ids to leave out: a --ground-truth run's --json output, or a list."),
    ] = None,
    model: Annotated[str, typer.Option(help="Any Inspect model string.")] = EMBEDDED_MODEL,
    k: Annotated[int, typer.Option("-k", min=1, help="Samples per problem (paper: 1).")] = 1,
    temperature: Annotated[
        float, typer.Option(min=0.0, help="Sampling temperature (paper: 0.6).")
    ] = 0.6,
    top_p: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Nucleus sampling, (0, 1] (paper: 0.95).")
    ] = 0.95,
    max_tokens: Annotated[int, typer.Option(min=1, help="Tokens per answer (T2: 8192).")] = 8192,
    check_timeout: Annotated[
        float, typer.Option(min=0.0, help="Seconds per Lean check (paper: 600).")
    ] = 600.0,
    limit: Annotated[
        int | None, typer.Option(min=1, help="Only the first N valid records.")
    ] = None,
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = None,
    ray_actors: RayActorsOption = None,
    allow_unsandboxed: AllowUnsandboxedOption = False,
    repo: Annotated[
        Path | None, typer.Option(help="Lean project of the records: test with lake build.")
    ] = None,
    build_timeout: Annotated[
        float, typer.Option(min=0.0, help="Seconds per lake build, --repo only (T2: 1200).")
    ] = 1200.0,
    workers: Annotated[int, typer.Option(min=1, help="Parallel project copies, --repo only.")] = 2,
    lake_memory_mb: Annotated[
        int | None,
        typer.Option(
            min=64,
            help="Memory of one lake call with all it starts, MB, --repo only (default: a"
            " REPL's, 8192).",
        ),
    ] = None,
    lake_processes: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Processes and threads of one lake call with all it starts, --repo only"
            " (default: a REPL's, 512; raise it for a many-core build).",
        ),
    ] = None,
    lake_output_mb: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Output one lake call may print (a file on this host), MB, --repo only"
            " (default 1024).",
        ),
    ] = None,
    min_successors: MinSuccessorsOption = 2,
    rules: Annotated[
        str,
        typer.Option(
            help="gapscope (audited, stricter) | t2 (the released evaluator's counting, to put"
            " a number next to the paper's)."
        ),
    ] = "gapscope",
    shots: Annotated[
        int,
        typer.Option(
            min=0, help="Worked exemplars before each question (paper: 0; its few-shot run: 2)."
        ),
    ] = 0,
    shot_pool: Annotated[
        str | None,
        typer.Option(help="T2 records the exemplars come from (default: --data; docs/t2.md)."),
    ] = None,
    refine: Annotated[
        int,
        typer.Option(
            min=0,
            help="Rounds of compile feedback: Lean's errors handed back until the answer"
            " compiles (paper: 0; its Hilbert-style baseline revises with them).",
        ),
    ] = 0,
    beq: Annotated[
        bool,
        typer.Option(
            "--beq",
            help="Also compare each theorem answer with the original by BEqL and BEq+ (both"
            " directions proved, as T2's evaluate_beq.py); file track only.",
        ),
    ] = False,
    allow_untested: Annotated[
        bool,
        typer.Option(
            "--allow-untested",
            help="Run on a checking path no Lean self-test certifies (a kimina server, --repo,"
            " a workspace whose `gapscope lean selftest` has not passed); scores are then"
            " labelled selftest=false in the log and the report.",
        ),
    ] = False,
    log_dir: Annotated[Path, typer.Option(help="Where the Inspect .eval logs go.")] = Path("logs"),
    json_out: JsonOut = False,
) -> None:
    """Generate each target declaration, test it with its successors, report per context.

    Needs a Lean backend (or --repo and lake): without one it stops before asking the model
    anything and says what to install. Records with defects are skipped and counted (with
    ``--rules t2``: every row is evaluated and counted as the released evaluator does).
    """
    from gapscope.lean import LeanUnavailable
    from gapscope.records import SourceError

    def build() -> Task:
        from gapscope.t2 import t2

        return t2(
            data=data,
            context=context,
            nl=[str(p) for p in nl] if nl else None,
            lean=lean,
            ground_truth=ground_truth,
            exclude=str(exclude) if exclude else None,
            limit=limit,
            k=k,
            temperature=temperature,
            top_p=top_p,
            max_tokens=max_tokens,
            check_timeout=check_timeout,
            executor=executor,
            ray_address=ray_address,
            ray_actors=ray_actors,
            allow_unsandboxed=allow_unsandboxed,
            repo=str(repo) if repo else None,
            build_timeout=build_timeout,
            workers=workers,
            lake_memory_mb=lake_memory_mb,
            lake_processes=lake_processes,
            lake_output_mb=lake_output_mb,
            min_successors=min_successors,
            rules=rules,
            shots=shots,
            shot_pool=shot_pool,
            refine=refine,
            beq=beq,
            allow_untested=allow_untested,
        )

    run_diagnostic(
        "run t2",
        json_out,
        build,
        model="none" if ground_truth else model,
        log_dir=log_dir,
        bad_input=(ValueError, OSError, SourceError, LeanUnavailable),
    )


from gapscope.app.t2_mine import mine_command  # noqa: E402

t2_app.command("mine")(mine_command)
