"""``gapscope profile``: every diagnostic a model can run, for several models, in one command.

It builds each diagnostic's task at a budget (``paper``: each paper's protocol; ``quick``: a
small first look; ``demo``: what ``make demo`` runs, ``quick`` where a spec has none), prints
the plan (samples, model calls, the token budget, Lean checks), runs it as one Inspect
``eval_set`` (a rerun resumes: finished tasks are not redone, a cut-off one continues) and
ends with the report and the pairwise comparisons over the log directory.
Lean-backed diagnostics run only with ``--lean``; without it (or without their data) each is
listed as skipped, with what would make it run. Steering is not part of a profile: it needs a
direction and is an intervention on a model, not a property of it (``gapscope run steer``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from gapscope.analysis import BUDGETS, DiagnosticSpec, Inputs, View
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
    from inspect_ai.model import Model

    from gapscope.app.preflight import Rate
    from gapscope.app.study import FirstLook, PlanRow, Study

BUDGET_HELP = " | ".join(f"{name} ({meaning})" for name, meaning in BUDGETS.items()) + "."
"""``--budget``'s help: the budgets of the spec contract; every diagnostic's spec says what
each means for it (:mod:`gapscope.analysis.table`)."""


def build_study(
    models: list[str],
    diagnostics: Sequence[DiagnosticSpec],
    budget: str,
    inputs: Inputs,
    first_look: FirstLook | None = None,
) -> Study:
    """Every task of the study, built (bad input raises here, before any model call), with
    ``first_look``'s caps; a diagnostic with reference players (``references``) adds them
    once, as model ``none``."""
    from gapscope.app.study import FirstLook, Skipped, Study, StudyTask, plan_of

    look = first_look or FirstLook()
    study = Study()

    def add(model: str, spec: DiagnosticSpec) -> None:
        builders, reason = spec.tasks(budget, inputs, model)
        if reason:
            study.skipped.append(Skipped(model, spec.name, reason))
        for label, build in builders:
            task = look.capped(build())
            row = plan_of(task, model, spec.name, label, look.limit)
            study.tasks.append(StudyTask(row, task, model))

    for model in models:
        for spec in diagnostics:
            add(model, spec)
    for spec in diagnostics:
        if spec.references:
            add("none", spec)
    return study


def _parse_diagnostics(names: str | None) -> list[DiagnosticSpec]:
    """The chosen diagnostics (default: every one known, built-in or installed)."""
    from gapscope.analysis import SpecError, spec_named, specs

    if names is None:
        return list(specs())
    # a name given twice is planned once
    chosen = list(dict.fromkeys(d.strip() for d in names.split(",") if d.strip()))
    try:
        if not chosen:
            raise SpecError(f"empty list; choose from {', '.join(s.name for s in specs())}")
        return [spec_named(name) for name in chosen]
    except SpecError as exc:
        raise typer.BadParameter(str(exc), param_hint="--diagnostics") from None


def profile(
    model: Annotated[
        list[str] | None, typer.Option("--model", help="Any Inspect model string; repeatable.")
    ] = None,
    lean: Annotated[
        str | None,
        typer.Option(help="Lean backend spec (local:DIR | kimina:URL) for the Lean-backed ones."),
    ] = None,
    diagnostics: Annotated[
        str | None,
        typer.Option(
            help="Comma list of diagnostic names (default: all, built-in and installed; "
            "an unknown name lists them)."
        ),
    ] = None,
    budget: Annotated[str, typer.Option(help=BUDGET_HELP)] = "paper",
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
    limit: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Only the first N samples of every task (a first look; in the plan and logs).",
        ),
    ] = None,
    max_tokens: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Cap every reply at N tokens, where a task's own cap is higher (a first look).",
        ),
    ] = None,
    json_out: JsonOut = False,
) -> None:
    """Profile models on every diagnostic: plan, run (resumable), report and comparisons."""
    from gapscope.app.preflight import (
        PREFLIGHT_TIMEOUT_S,
        plan_time,
        profile_advice,
        request_bounds,
    )
    from gapscope.app.study import FirstLook
    from gapscope.lean import LeanUnavailable
    from gapscope.models import EndpointError
    from gapscope.records import SourceError

    if budget not in BUDGETS:
        raise typer.BadParameter(
            f"{budget!r}: choose one of {', '.join(BUDGETS)}", param_hint="--budget"
        )
    chosen = _parse_diagnostics(diagnostics)
    models = model or [EMBEDDED_MODEL]
    given = {"families": families, "minif2f": minif2f, "t2_data": t2_data}
    inputs = Inputs(lean, {k: v for k, v in given.items() if v is not None}, allow_unsandboxed)
    _say_load_problems()
    first_look = FirstLook(limit, max_tokens)
    with command_output("profile", json_out) as out:
        require_directory(log_dir, "--log-dir")
        try:
            # served models answer one request first (also in a dry run); local ones open
            # only when the study runs
            opened, rates = open_and_check(models, dry_run, attempt_timeout or PREFLIGHT_TIMEOUT_S)
            study = build_study(models, chosen, budget, inputs, first_look)
        except (ValueError, SourceError, OSError, LeanUnavailable, EndpointError) as exc:
            out.fail(exc)
        advice = profile_advice(budget, limit, max_tokens)
        rows = [t.row for t in study.tasks]
        plan = study.plan() | {"time": plan_time(rows, rates, advice)}
        if first_look.to_dict():
            plan["first_look"] = first_look.to_dict()
        from gapscope.analysis import print_plan

        if dry_run:
            out.finish(View(details={"plan": plan}, show=lambda c: print_plan(plan, c)))
            return
        limits = {"max_connections": max_connections} if max_connections else {}
        bounds = generation_limits(timeout, attempt_timeout, max_retries)

        def generation(row: PlanRow) -> dict[str, int]:
            return request_bounds(row, rates.get(row.model), bounds, max_connections)

        run_args = {"models": opened, "generation": generation, "retry_attempts": retry_attempts}
        _run(out, study, plan, log_dir, **run_args, **limits, **first_look.eval_args())


def _say_load_problems() -> None:
    """One line on stderr per installed diagnostic that did not load (the study goes on
    without it; asking for it by name is an error that repeats the line)."""
    from gapscope.analysis import load_problems
    from gapscope.app.kit import err_console

    for problem in load_problems():
        err_console.print(f"warning: {problem}", markup=False, soft_wrap=True)


def _run(out: Output, study: Study, plan: dict[str, Any], log_dir: Path, **eval_args: Any) -> None:
    from gapscope.analysis import (
        glance_dict,
        load_standing,
        print_glance,
        print_plan,
        print_rows,
        write_report,
    )
    from gapscope.app.kit import err_console
    from gapscope.app.study import StudyProgress, run_study

    if not out.json_mode:
        print_plan(plan, err_console)
    progress = StudyProgress(study, lambda line: err_console.print(line, markup=False))
    ending = run_study(study, log_dir, progress, **eval_args)
    out.logs.extend(t.log for t in ending.tasks)
    loaded = read_or_fail(out, lambda: load_standing([Path(t.log) for t in ending.tasks]))
    report = write_report(
        loaded, log_dir / "report.html", plan=plan, status=ending.lines(), finished=ending.complete
    )
    details = {
        "plan": plan,
        "html": str(report.html),
        "glance": glance_dict(report.glance),
        "comparisons": [c.to_dict() for c in report.comparisons],
        "notes": report.notes,
        "status": {t.log: t.status for t in ending.tasks},
        "ending": ending.to_dict(),
    }

    def show(console: Console) -> None:  # how the study stands comes first
        for line in ending.lines():
            console.print(line, markup=False, highlight=False, soft_wrap=True)
        print_glance(report.glance, console)
        print_rows(report.rows, console)
        console.print(f"report: {report.html}", markup=False, soft_wrap=True)

    error = None if ending.complete else f"{ending.headline()}; {ending.rerun}"
    out.finish(View(report.rows, details, show, report.notes), ending.code, error)


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
    from gapscope.models import is_served

    models = list(models)
    opened = {name: open_model(name) for name in models if not dry_run or is_served(name)}
    rates = check_endpoints(opened, timeout)
    for name in models:
        if name.startswith("gapscope/"):
            assumed = assumed_rate(name, _has_gpu())
            if assumed is not None:
                rates[name] = assumed
    return opened, rates
