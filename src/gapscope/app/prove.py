"""``gapscope run prove`` and ``gapscope prove report``: thin layers over the task and the
analysis."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from gapscope.app.kit import (
    EMBEDDED_MODEL,
    JsonOut,
    command_output,
    read_or_fail,
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
    model: Annotated[str, typer.Option(help="Any Inspect model string.")] = EMBEDDED_MODEL,
    n: Annotated[int, typer.Option("-n", min=1, help="Attempts per problem (seed: 32).")] = 32,
    k: Annotated[str, typer.Option("--k", help="pass@k values to report, each <= n.")] = "1,8,32",
    lean: Annotated[
        str | None, typer.Option(help="Lean backend spec (default: configured).")
    ] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N problems.")] = None,
    max_tokens: Annotated[int, typer.Option(min=1, help="Tokens per attempt.")] = 4096,
    temperature: Annotated[float, typer.Option(min=0.0, help="Sampling temperature.")] = 1.0,
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = None,
    ray_actors: RayActorsOption = None,
    allow_unsandboxed: AllowUnsandboxedOption = False,
    steer: Annotated[
        str | None, typer.Option(help="Direction directory (gapscope steer extract) to steer with.")
    ] = None,
    alpha: Annotated[
        float, typer.Option(help="Steering strength; the seed's transfer test uses -3 and +1.")
    ] = 0.0,
    log_dir: Annotated[Path, typer.Option(help="Where the Inspect .eval logs go.")] = Path("logs"),
    json_out: JsonOut = False,
) -> None:
    """Generate n whole proofs per problem, check them with Lean, print pass@k and coherence."""
    from gapscope.lean import LeanUnavailable
    from gapscope.records import SourceError

    def build() -> Task:
        from gapscope.prove import prove

        return prove(
            dataset=dataset,
            subset=subset,
            split=split,
            n=n,
            k=k,
            lean=lean,
            limit=limit,
            max_tokens=max_tokens,
            temperature=temperature,
            executor=executor,
            ray_address=ray_address,
            ray_actors=ray_actors,
            allow_unsandboxed=allow_unsandboxed,
            steer=steer,
            alpha=alpha,
        )

    run_diagnostic(
        "run prove",
        json_out,
        build,
        model=model,
        log_dir=log_dir,
        bad_input=(ValueError, SourceError, LeanUnavailable),
    )


@prove_app.command("report")
def report(
    logs: Annotated[list[Path], typer.Argument(help="prove .eval logs, one per model.")],
    k: Annotated[
        str | None, typer.Option("--k", help="pass@k values, e.g. 1,8,32 (default: the run's).")
    ] = None,
    per_problem: Annotated[
        bool, typer.Option("--per-problem", help="Also a table of every problem's n, c, pass@k.")
    ] = False,
    json_out: JsonOut = False,
) -> None:
    """pass@k (unbiased estimator, mean over problems) and coherence fractions per log."""
    from gapscope.analysis import ViewOptions, prove, prove_view

    ks = _ks(k)
    with command_output("prove report", json_out) as out:
        runs = read_or_fail(out, lambda: [prove.read(p) for p in logs])
        out.logs.extend(r.log_location for r in runs)
        try:
            summaries = [prove.summarize(r, ks) for r in runs]
        except ValueError as exc:
            out.fail(exc)
        out.finish(prove_view(summaries, ViewOptions(per_problem=per_problem)))
