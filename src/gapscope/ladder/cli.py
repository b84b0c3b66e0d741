"""``gapscope run ladder`` and ``gapscope ladder report|compile``: thin layers over the task
and the analysis."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from gapscope.clikit import fail, require_success, run_task
from gapscope.ladder.probes import PAPER_MAX_TOKENS
from gapscope.ladder.taxonomy import GAP_ORDER, OUTCOME_ORDER

ladder_app = typer.Typer(
    help="OracleLadder: reports over finished runs, teacher compilation of new families.",
    no_args_is_help=True,
)


def run_ladder(
    families: Annotated[
        str | None, typer.Option(help="Families JSONL path or Hugging Face dataset id.")
    ] = None,
    bundled: Annotated[bool, typer.Option("--bundled", help="Use the shipped family set.")] = False,
    model: Annotated[str, typer.Option(help="Any Inspect model string.")] = "gapscope/embedded",
    k: Annotated[int, typer.Option("-k", min=1, help="Rollouts per probe (paper: 8).")] = 8,
    conditions: Annotated[
        str, typer.Option(help="all | ladder | comma list, e.g. C1,C2,C3,S0")
    ] = "all",
    limit: Annotated[int | None, typer.Option(help="Probe only the first N families.")] = None,
    max_tokens: Annotated[
        int, typer.Option(help="Tokens per rollout (default: the paper's 16384 for every probe).")
    ] = PAPER_MAX_TOKENS,
    temperature: Annotated[float, typer.Option(help="Rollout sampling temperature.")] = 0.7,
    tau: Annotated[int, typer.Option(min=1, help="Outcome threshold for the report.")] = 1,
    log_dir: Annotated[Path, typer.Option(help="Where the Inspect .eval logs go.")] = Path("logs"),
    json_out: Annotated[bool, typer.Option("--json", help="Summary as JSON on stdout.")] = False,
) -> None:
    """Run Stage 0, the C1/C2/C3 probes and the controls, then print the outcome tables."""
    from gapscope.analysis.ladder import build_report, model_run
    from gapscope.ladder.task import oracle_ladder
    from gapscope.records import SourceError

    if bundled == (families is not None):
        raise typer.BadParameter("give exactly one of --families F or --bundled")
    try:
        task = oracle_ladder(
            families="bundled" if bundled else str(families),
            k=k,
            conditions=conditions,
            limit=limit,
            max_tokens=max_tokens,
            temperature=temperature,
        )
    except (ValueError, SourceError) as exc:
        fail(exc)
    log = run_task(task, model, log_dir)
    require_success(log)
    report = build_report([model_run(log)], tau=tau)
    _emit(report.to_dict(), json_out)


@ladder_app.command("report")
def report(
    logs: Annotated[
        list[Path] | None, typer.Argument(help="oracle_ladder .eval logs, one per model.")
    ] = None,
    names: Annotated[
        str | None, typer.Option(help="Comma-separated display names, one per log.")
    ] = None,
    panel: Annotated[
        list[Path] | None,
        typer.Option(help="Released parent-probe counts (JSONL), one file per model."),
    ] = None,
    stage0: Annotated[
        list[Path] | None,
        typer.Option(help="Released Stage 0 counts (JSONL), one per --panel, same order."),
    ] = None,
    families: Annotated[
        Path | None, typer.Option(help="Families JSONL the --panel results are over.")
    ] = None,
    tau: Annotated[int, typer.Option(min=1, help="Outcome threshold.")] = 1,
    resamples: Annotated[int, typer.Option(min=100, help="Bootstrap resamples.")] = 2000,
    json_out: Annotated[bool, typer.Option("--json", help="Tables as JSON on stdout.")] = False,
) -> None:
    """Outcome, gap, control, tau-sensitivity and ranking tables over finished runs.

    Runs are our logs and/or results in the format the OracleLadder authors released
    (``--panel P.jsonl --stage0 S.jsonl``, repeatable, the model named by the records, with
    ``--families``). With two runs (e.g. two checkpoints) it adds the transition matrix.
    """
    from inspect_ai.log import read_eval_log

    from gapscope.analysis.ladder import build_report, model_run
    from gapscope.ladder.panel import read_panels

    logs = logs or []
    labels = names.split(",") if names else [None] * len(logs)
    if len(labels) != len(logs):
        raise typer.BadParameter(f"{len(labels)} names for {len(logs)} logs", param_hint="--names")
    if not logs and not panel:
        raise typer.BadParameter("give .eval logs and/or --panel/--stage0 pairs")
    try:
        runs = [model_run(read_eval_log(str(p)), n) for p, n in zip(logs, labels, strict=True)]
        runs += read_panels(panel or [], stage0 or [], families)
        result = build_report(runs, tau=tau, n_resamples=resamples)
    except (ValueError, FileNotFoundError, KeyError) as exc:
        fail(exc)
    _emit(result.to_dict(), json_out)


def _emit(result: dict[str, Any], json_out: bool) -> None:
    if json_out:
        typer.echo(json.dumps(result, indent=2))
    else:
        print_report(result, Console())


def print_report(result: dict[str, Any], console: Console) -> None:
    """The report's tables for a terminal."""
    models: dict[str, Any] = result["models"]
    outcomes = Table(title=f"OracleLadder outcomes (tau = {result['tau']})")
    outcomes.add_column("model")
    for o in OUTCOME_ORDER:
        outcomes.add_column(o.value, justify="right")
    for col in ("any probe [95% CI]", "Stage 0 pass", "milestones passed", "C1 acc"):
        outcomes.add_column(col, justify="right")
    for name, m in models.items():
        ci = m["any_probe_ci95"]
        outcomes.add_row(
            name,
            *(str(m["outcomes"][o.value]) for o in OUTCOME_ORDER),
            f"{m['any_probe']}/{m['n_families']} [{ci['low']:.0f}, {ci['high']:.0f}]",
            str(m["stage0_pass"]),
            f"{100 * m['milestone_pass_fraction']:.1f}%",
            f"{100 * m['direct_accuracy']:.1f}%",
        )
    console.print(outcomes)

    gaps = Table(title="Five-way gap labels (families not solved directly)")
    gaps.add_column("model")
    for g in GAP_ORDER[1:]:
        gaps.add_column(g.value, justify="right")
    for name, m in models.items():
        gaps.add_row(name, *(str(m["gaps"][g.value]) for g in GAP_ORDER[1:]))
    console.print(gaps)

    controls = Table(title="Families solved per condition (specificity of the help)")
    controls.add_column("model")
    first = next(iter(models.values()))
    for c in first["solved_by_condition"]:
        controls.add_column(c, justify="right")
    for name, m in models.items():
        controls.add_row(name, *(str(n) for n in m["solved_by_condition"].values()))
    console.print(controls)

    taus = Table(title="Threshold sensitivity: outcome counts at tau = 1..5")
    taus.add_column("model")
    taus.add_column("tau", justify="right")
    for o in OUTCOME_ORDER:
        taus.add_column(o.value, justify="right")
    for name, m in models.items():
        for t, row in m["tau_sensitivity"].items():
            taus.add_row(name, t, *(str(row[o.value]) for o in OUTCOME_ORDER))
    console.print(taus)

    if result["ranking_stability"]:
        stab = Table(title="Ranking stability: share of family resamples where A beats B")
        for col in ("A", "B", "A beats B", "ties"):
            stab.add_column(col)
        for s in result["ranking_stability"]:
            stab.add_row(s["a"], s["b"], f"{100 * s['a_beats_b']:.0f}%", f"{100 * s['ties']:.0f}%")
        console.print(stab)
    if result["kendall_tau_direct_accuracy_vs_any_probe"] is not None:
        console.print(
            "Kendall tau (C1 accuracy vs any-probe ranking): "
            f"{result['kendall_tau_direct_accuracy_vs_any_probe']:+.2f}"
        )
    anchors = result["kendall_tau_composition_gap_across_anchors"]
    if anchors is not None:
        table = Table(title="Composition-gap ranking agreement between anchors (Kendall tau)")
        for col in ("anchor A", "anchor B", "tau"):
            table.add_column(col)
        for pair in anchors["pairs"]:
            tau = "undefined" if pair["tau"] is None else f"{pair['tau']:+.2f}"
            table.add_row(pair["a"], pair["b"], tau)
        console.print(table)
        if anchors["mean"] is not None:
            console.print(f"mean over anchor pairs: {anchors['mean']:+.2f}")
    if result["transition_matrix"]:
        names = list(models)
        trans = Table(title=f"Transitions {names[0]} (rows) -> {names[1]} (columns)")
        trans.add_column("")
        for o in OUTCOME_ORDER:
            trans.add_column(o.value, justify="right")
        for row_name, row in result["transition_matrix"].items():
            trans.add_row(row_name, *(str(row[o.value]) for o in OUTCOME_ORDER))
        console.print(trans)


@ladder_app.command("compile")
def compile_families(
    teacher: Annotated[str, typer.Option(help="Inspect model string of the teacher.")],
    problems: Annotated[
        Path, typer.Option(help="JSONL with problem, answer (+ pid, solution) per line.")
    ],
    out: Annotated[Path, typer.Option(help="Where to write the compiled families (JSONL).")],
    max_attempts: Annotated[
        int, typer.Option(min=1, help="Regenerations allowed per problem after a rejection.")
    ] = 3,
    log_dir: Annotated[Path, typer.Option(help="Where the Inspect .eval logs go.")] = Path("logs"),
    json_out: Annotated[bool, typer.Option("--json", help="Funnel as JSON on stdout.")] = False,
) -> None:
    """Ask a teacher model to write milestone families; keep the valid, leak-free ones."""
    from gapscope.ladder.compile import Stage, funnel_counts
    from gapscope.ladder.compile_task import ladder_compile

    try:
        task = ladder_compile(problems=str(problems), max_attempts=max_attempts)
    except (ValueError, FileNotFoundError) as exc:
        fail(exc)
    log = run_task(task, teacher, log_dir)
    kept: list[dict[str, Any]] = []
    reached: list[Stage | None] = []
    rejected_attempts = 0
    for sample in log.samples or []:
        failures = sample.store.get("failures", [])
        family = sample.store.get("family")
        rejected_attempts += len(failures)
        if family:
            kept.append(family)
            reached.append(None)
        else:
            reached.append(Stage(failures[-1]["stage"]) if failures else Stage.REPLIED)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(f, ensure_ascii=False) + "\n" for f in kept), "utf-8")
    funnel = funnel_counts(reached) | {"rejected_attempts": rejected_attempts}
    result = {"funnel": funnel, "out": str(out), "log": log.location, "status": log.status}
    if json_out:
        typer.echo(json.dumps(result, indent=2))
    else:
        table = Table(title="Teacher compilation funnel")
        table.add_column("stage")
        table.add_column("families", justify="right")
        for stage, n in funnel.items():
            table.add_row(stage, str(n))
        Console().print(table)
        Console().print(f"wrote {len(kept)} families to {out}; log: {log.location}")
    require_success(log)


@ladder_app.command("screen")
def screen_families(
    anchor_log: Annotated[
        Path, typer.Argument(help="The anchor student's oracle_ladder log (conditions C1,S0).")
    ],
    families: Annotated[Path, typer.Option(help="The compiled families (JSONL) it ran on.")],
    out: Annotated[Path, typer.Option(help="Where to write the screened families (JSONL).")],
    json_out: Annotated[bool, typer.Option("--json", help="Funnel as JSON on stdout.")] = False,
) -> None:
    """The paper's anchor screen: keep families the anchor fails directly in every rollout
    but whose every milestone it solves alone, with at least two tested milestones."""
    from inspect_ai.log import read_eval_log

    from gapscope.analysis.ladder import model_run
    from gapscope.ladder.anchors import screen
    from gapscope.ladder.families import load_families

    try:
        funnel = screen(model_run(read_eval_log(str(anchor_log))).families())
        loaded = load_families(families)
    except (ValueError, FileNotFoundError, KeyError) as exc:
        fail(exc)
    kept = set(funnel.kept)
    chosen = [f.to_dict() for f in loaded.families if f.pid in kept]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(f, ensure_ascii=False) + "\n" for f in chosen), "utf-8")
    result = {"funnel": funnel.counts(), "out": str(out)}
    if json_out:
        typer.echo(json.dumps(result, indent=2))
        return
    table = Table(title="Anchor screen")
    table.add_column("stage")
    table.add_column("families", justify="right")
    for stage, n in funnel.counts().items():
        table.add_row(stage, str(n))
    Console().print(table)
    Console().print(f"wrote {len(chosen)} families to {out}")
