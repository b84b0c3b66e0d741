"""``gapscope profile``: every diagnostic a model can run, for several models, in one command.

It builds each diagnostic's task at a budget (``paper``: each paper's protocol; ``quick``: a
small first look), prints the plan (samples, model calls, the token budget, Lean checks), runs
it as one Inspect ``eval_set`` (a rerun resumes: finished tasks are not redone, a cut-off one
continues) and ends with the report and the pairwise comparisons over the log directory.
Lean-backed diagnostics run only with ``--lean``; without it (or without their data) each is
listed as skipped, with what would make it run. Steering is not part of a profile: it needs a
direction and is an intervention on a model, not a property of it (``gapscope run steer``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from gapscope.analysis.view import View
from gapscope.app.kit import (
    EMBEDDED_MODEL,
    JsonOut,
    Output,
    command_output,
    read_or_fail,
    require_directory,
)
from gapscope.app.options import (
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT_S,
    AllowUnsandboxedOption,
    AttemptTimeoutOption,
    MaxRetriesOption,
    TimeoutOption,
    generation_limits,
)

if TYPE_CHECKING:
    from inspect_ai import Task
    from inspect_ai.model import Model

    from gapscope.app.preflight import Rate
    from gapscope.app.study import PlanRow, Study

DIAGNOSTICS = ("s2b", "ladder", "onng", "prove", "t2")
MODEL_SEATS = (("listener", "lm"), ("speaker", "lm"))
"""A model plays S2B-LM in both seats: receptivity (listener) and constructivity (speaker)."""
REFERENCE_SEATS = (
    ("listener", "rule"),
    ("listener", "random"),
    ("speaker", "rule"),
    ("speaker", "holistic"),
    ("speaker", "random"),
)
"""S2B-LM's reference players, run once per study (no model): the scale the models sit on."""
LEAN_HINT = (
    "needs a Lean backend: --lean local:DIR (make one with `gapscope lean setup DIR`; "
    "`gapscope lean doctor` says what is missing) or --lean kimina:URL"
)


@dataclass(frozen=True)
class Budget:
    """The task arguments of every diagnostic at one budget."""

    name: str
    s2b: tuple[tuple[str, int], ...]
    """(preset, seeds) pairs."""
    s2b_max_tokens: int
    s2b_message_tokens: int
    """The speaker seat's budget per message (a message is a few vocabulary tokens)."""
    s2b_overrides: dict[str, Any] = field(default_factory=dict)
    """:class:`gapscope.s2b.config.S2BConfig` fields set on every S2B preset (e.g. a shorter
    supporting phase for the demo)."""
    ladder: dict[str, Any] = field(default_factory=dict)
    onng: dict[str, Any] = field(default_factory=dict)
    prove: dict[str, Any] = field(default_factory=dict)
    t2: dict[str, Any] = field(default_factory=dict)


BUDGETS = {
    # Each paper's protocol: S2B-LM's Table 1 (three presets, 4 seeds); OracleLadder's 8
    # rollouts of up to 16,384 tokens; O-NNG's lambda grid; pass@32 on miniF2F; T2's defaults.
    "paper": Budget(
        "paper",
        s2b=(("scs-0shot", 4), ("cat-0shot", 4), ("cat-10shot", 4)),
        s2b_max_tokens=256,
        s2b_message_tokens=64,
        ladder={"k": 8, "max_tokens": 16384},
        onng={},
        prove={"n": 32, "k": "1,8,32"},
        t2={},
    ),
    # A first look in minutes on a CPU: the small S2B preset, two bundled families with one
    # rollout each, three problems per Lean-backed diagnostic.
    "quick": Budget(
        "quick",
        s2b=(("demo", 2),),
        s2b_max_tokens=160,
        s2b_message_tokens=32,
        ladder={"k": 1, "limit": 2, "max_tokens": 384},
        onng={"lams": "0,1.0", "limit": 3, "max_tokens": 1024},
        prove={"n": 4, "k": "1,4", "limit": 3, "max_tokens": 1024},
        t2={"k": 1, "limit": 3, "max_tokens": 2048},
    ),
}


@dataclass(frozen=True)
class Inputs:
    """What the study runs on beyond the models: data files and the Lean backend."""

    lean: str | None
    families: str
    minif2f: str | None
    t2_data: str | None
    allow_unsandboxed: bool = False


def _s2b_tasks(budget: Budget, model: str) -> list[tuple[str, Callable[[], Task]]]:
    from gapscope.s2b.task import s2b_lm

    out: list[tuple[str, Callable[[], Task]]] = []
    for preset, seeds in budget.s2b:
        for role, name in MODEL_SEATS if model != "none" else REFERENCE_SEATS:
            tokens = budget.s2b_max_tokens if role == "listener" else budget.s2b_message_tokens

            def build(
                preset: str = preset,
                seeds: int = seeds,
                role: str = role,
                name: str = name,
                tokens: int = tokens,
            ) -> Task:
                common: dict[str, Any] = {"preset": preset, "seeds": seeds, "max_tokens": tokens}
                if role == "listener":
                    return s2b_lm(**common, listener=name, **budget.s2b_overrides)
                return s2b_lm(**common, role=role, speaker=name, **budget.s2b_overrides)

            out.append((f"{preset} ({name} {role})", build))
    return out


def _builders(
    diagnostic: str, budget: Budget, inputs: Inputs
) -> tuple[list[tuple[str, Callable[[], Task]]], str | None]:
    """The tasks of one diagnostic for one model, or why it is skipped."""
    if diagnostic in ("onng", "prove", "t2") and inputs.lean is None:
        return [], LEAN_HINT
    if diagnostic == "ladder":
        from gapscope.ladder.task import oracle_ladder

        args = budget.ladder | {"families": inputs.families}
        return [(f"{inputs.families} families", lambda: oracle_ladder(**args))], None
    lean = {"lean": inputs.lean, "allow_unsandboxed": inputs.allow_unsandboxed}
    if diagnostic == "onng":
        from gapscope.onng.task import onng

        args = budget.onng | lean
        return [("O-NNG", lambda: onng(**args))], None
    if diagnostic == "prove":
        if inputs.minif2f is None:
            return [], "needs --minif2f FILE (miniF2F Lean 4 statements, JSONL)"
        from gapscope.prove.task import prove

        args = budget.prove | lean | {"dataset": inputs.minif2f}
        return [("miniF2F", lambda: prove(**args))], None
    if inputs.t2_data is None:
        return [], "needs --t2-data FILE (T2 records, JSONL)"
    from gapscope.t2.task import t2

    args = budget.t2 | lean | {"data": inputs.t2_data}
    return [("T2", lambda: t2(**args))], None


def build_study(models: list[str], diagnostics: list[str], budget: Budget, inputs: Inputs) -> Study:
    """Every task of the study, built (bad input raises here, before any model call)."""
    from gapscope.app.study import Skipped, Study, StudyTask, plan_of

    study = Study()

    def add(model: str, diagnostic: str, label: str, build: Callable[[], Task]) -> None:
        task = build()
        study.tasks.append(StudyTask(plan_of(task, model, diagnostic, label), task, model))

    for model in models:
        for diagnostic in diagnostics:
            if diagnostic == "s2b":
                for label, build in _s2b_tasks(budget, model):
                    add(model, diagnostic, label, build)
                continue
            builders, reason = _builders(diagnostic, budget, inputs)
            if reason:
                study.skipped.append(Skipped(model, diagnostic, reason))
            for label, build in builders:
                add(model, diagnostic, label, build)
    if "s2b" in diagnostics:
        for label, build in _s2b_tasks(budget, "none"):
            add("none", "s2b", label, build)
    return study


def _parse_diagnostics(spec: str) -> list[str]:
    chosen = [d.strip() for d in spec.split(",") if d.strip()]
    unknown = [d for d in chosen if d not in DIAGNOSTICS]
    if unknown or not chosen:
        raise typer.BadParameter(
            f"unknown {', '.join(unknown) or 'empty list'}; choose from {', '.join(DIAGNOSTICS)}",
            param_hint="--diagnostics",
        )
    return chosen


def profile(
    model: Annotated[
        list[str] | None, typer.Option("--model", help="Any Inspect model string; repeatable.")
    ] = None,
    lean: Annotated[
        str | None,
        typer.Option(help="Lean backend spec (local:DIR | kimina:URL) for O-NNG, prove, T2."),
    ] = None,
    diagnostics: Annotated[
        str, typer.Option(help="Comma list of s2b, ladder, onng, prove, t2.")
    ] = ",".join(DIAGNOSTICS),
    budget: Annotated[
        str, typer.Option(help="paper (each paper's protocol) | quick (a first look).")
    ] = "paper",
    families: Annotated[
        str, typer.Option(help="OracleLadder families: JSONL path, hub id, or bundled.")
    ] = "bundled",
    minif2f: Annotated[str | None, typer.Option(help="miniF2F JSONL for pass@k.")] = None,
    t2_data: Annotated[str | None, typer.Option(help="T2 records (JSONL) for T2.")] = None,
    log_dir: Annotated[Path, typer.Option(help="The study's log directory.")] = Path(
        "logs/profile"
    ),
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the plan and stop; nothing is spent.")
    ] = False,
    retry_attempts: Annotated[
        int, typer.Option(min=0, help="Retries of a task whose samples failed.")
    ] = 3,
    allow_unsandboxed: AllowUnsandboxedOption = False,
    max_connections: Annotated[
        int | None,
        typer.Option(min=1, help="Requests in flight per model (Inspect's; default: its own)."),
    ] = None,
    timeout: TimeoutOption = DEFAULT_TIMEOUT_S,
    attempt_timeout: AttemptTimeoutOption = None,
    max_retries: MaxRetriesOption = DEFAULT_MAX_RETRIES,
    json_out: JsonOut = False,
) -> None:
    """Profile models on every diagnostic: plan, run (resumable), report and comparisons."""
    from gapscope.app.preflight import PREFLIGHT_TIMEOUT_S, plan_time, request_bounds
    from gapscope.lean.backend import LeanUnavailable
    from gapscope.models.endpoint import EndpointError
    from gapscope.records import SourceError

    if budget not in BUDGETS:
        raise typer.BadParameter(
            f"{budget!r}: choose one of {', '.join(BUDGETS)}", param_hint="--budget"
        )
    chosen = _parse_diagnostics(diagnostics)
    models = model or [EMBEDDED_MODEL]
    inputs = Inputs(lean, families, minif2f, t2_data, allow_unsandboxed)
    with command_output("profile", json_out) as out:
        require_directory(log_dir, "--log-dir")
        try:
            # served models answer one request first (also in a dry run); local ones open
            # only when the study runs
            opened, rates = open_and_check(models, dry_run, attempt_timeout or PREFLIGHT_TIMEOUT_S)
            study = build_study(models, chosen, BUDGETS[budget], inputs)
        except (ValueError, SourceError, OSError, LeanUnavailable, EndpointError) as exc:
            out.fail(exc)
        plan = study.plan() | {"time": plan_time((t.row for t in study.tasks), rates)}
        from gapscope.analysis.terminal import print_plan

        if dry_run:
            out.finish(View(details={"plan": plan}, show=lambda c: print_plan(plan, c)))
            return
        limits = {"max_connections": max_connections} if max_connections else {}
        given = generation_limits(timeout, attempt_timeout, max_retries)

        def generation(row: PlanRow) -> dict[str, int]:
            return request_bounds(row, rates.get(row.model), given, max_connections)

        run_args = {"models": opened, "generation": generation, "retry_attempts": retry_attempts}
        _run(out, study, plan, log_dir, **run_args, **limits)


def _run(out: Output, study: Study, plan: dict[str, Any], log_dir: Path, **eval_args: Any) -> None:
    from gapscope.analysis.diagnostics import load_standing
    from gapscope.analysis.report import write_report
    from gapscope.analysis.terminal import print_plan, print_rows
    from gapscope.app.kit import err_console
    from gapscope.app.study import StudyProgress, run_study

    if not out.json_mode:
        print_plan(plan, err_console)
    progress = StudyProgress(study, lambda line: err_console.print(line, markup=False))
    ending = run_study(study, log_dir, progress, **eval_args)
    out.logs.extend(t.log for t in ending.tasks)
    loaded = read_or_fail(
        out, lambda: load_standing([Path(t.log) for t in ending.tasks if t.scored])
    )
    report = write_report(
        loaded, log_dir / "report.html", plan=plan, status=ending.lines(), finished=ending.complete
    )
    details = {
        "plan": plan,
        "html": str(report.html),
        "comparisons": [c.to_dict() for c in report.comparisons],
        "notes": report.notes,
        "status": {t.log: t.status for t in ending.tasks},
        "ending": ending.to_dict(),
    }

    def show(console: Console) -> None:  # how the study stands comes first
        for line in ending.lines():
            console.print(line, markup=False, highlight=False, soft_wrap=True)
        print_rows(report.rows, console)
        console.print(f"report: {report.html}", markup=False, soft_wrap=True)

    error = None if ending.complete else f"{ending.headline()}; {ending.rerun}"
    out.finish(View(report.rows, details, show), ending.code, error)


def open_and_check(
    models: Iterable[str], dry_run: bool, timeout: int
) -> tuple[dict[str, str | Model], dict[str, Rate]]:
    """Open ``models`` (only the served ones for a dry run) and probe the served ones: the
    opened models and every rate known (measured, or assumed for gapscope's engine).

    Raises ModelOpenError for a model the provider cannot open, EndpointError for a served
    one that does not answer.
    """
    from gapscope.app.kit import _has_gpu, open_model
    from gapscope.app.preflight import assumed_rate, check_endpoints
    from gapscope.models.endpoint import is_served

    models = list(models)
    opened = {name: open_model(name) for name in models if not dry_run or is_served(name)}
    rates = check_endpoints(opened, timeout)
    for name in models:
        if name.startswith("gapscope/"):
            assumed = assumed_rate(name, _has_gpu())
            if assumed is not None:
                rates[name] = assumed
    return opened, rates
