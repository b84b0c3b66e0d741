"""``gapscope run ladder`` and ``gapscope ladder report|compile``: thin layers over the task
and the analysis."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from gapscope.analysis import View, ViewOptions
from gapscope.app.kit import (
    EMBEDDED_MODEL,
    JsonOut,
    command_output,
    read_or_fail,
    refuse_overwriting,
    require_directory,
    run_diagnostic,
    write_output,
)
from gapscope.app.options import AllowUnsandboxedOption
from gapscope.ladder import PAPER_MAX_TOKENS, AnchorRule, FamiliesVersion, Match, TieRule
from gapscope.stats import BootstrapScheme

if TYPE_CHECKING:
    from inspect_ai import Task
    from inspect_ai.log import EvalLog

    from gapscope.ladder import ReviewLabel


FamiliesVersionOption = Annotated[
    FamiliesVersion,
    typer.Option(
        help="'corrected' (default: the release's post-publication corrections to golds "
        "applied) or 'published' (paper mode: the golds the paper graded against; the "
        "released panel then gives the paper's numbers)."
    ),
]


def _log_names(names: str | None, logs: list[Path]) -> list[str | None]:
    """``--names`` split, one per log (None: the log's own model name)."""
    labels: list[str | None] = list(names.split(",")) if names else [None] * len(logs)
    if len(labels) != len(logs):
        raise typer.BadParameter(f"{len(labels)} names for {len(logs)} logs", param_hint="--names")
    return labels


ladder_app = typer.Typer(
    help="OracleLadder: reports over finished runs, teacher compilation of new families.",
    no_args_is_help=True,
)


def run_ladder(
    families: Annotated[
        str | None,
        typer.Option(
            help="Families JSONL path, Hugging Face dataset id, or a released set by name "
            "(main-354, held-out-32; with --release)."
        ),
    ] = None,
    bundled: Annotated[bool, typer.Option("--bundled", help="Use the shipped family set.")] = False,
    release: Annotated[
        Path | None,
        typer.Option(help="A checkout of the authors' OracleLadder release (named sets)."),
    ] = None,
    model: Annotated[str, typer.Option(help="Any Inspect model string.")] = EMBEDDED_MODEL,
    k: Annotated[int, typer.Option("-k", min=1, help="Rollouts per probe (paper: 8).")] = 8,
    conditions: Annotated[
        str, typer.Option(help="all | ladder | comma list, e.g. C1,C2,C3,S0")
    ] = "all",
    limit: Annotated[
        int | None, typer.Option(min=1, help="Probe only the first N families.")
    ] = None,
    max_tokens: Annotated[
        int,
        typer.Option(min=1, help="Tokens per rollout and Stage 0 (default: the paper's 16,384)."),
    ] = PAPER_MAX_TOKENS,
    temperature: Annotated[
        float, typer.Option(min=0.0, help="Rollout sampling temperature.")
    ] = 0.7,
    tau: Annotated[int, typer.Option(min=1, help="Outcome threshold for the report.")] = 1,
    families_version: FamiliesVersionOption = FamiliesVersion.CORRECTED,
    verifier: Annotated[
        str,
        typer.Option(
            help="Grader: 'gapscope' (default) or 'authors' (their strict cascade, "
            "to reproduce their grading; docs/verify.md lists the differences)."
        ),
    ] = "gapscope",
    log_dir: Annotated[Path, typer.Option(help="Where the Inspect .eval logs go.")] = Path("logs"),
    json_out: JsonOut = False,
) -> None:
    """Run Stage 0, the C1/C2/C3 probes and the controls, then print the outcome tables."""
    from gapscope.records import SourceError

    if bundled == (families is not None):
        raise typer.BadParameter("give exactly one of --families F or --bundled")

    def build() -> Task:
        from gapscope.ladder import oracle_ladder

        if tau > k:
            raise typer.BadParameter(
                f"--tau {tau} needs {tau} correct rollouts of {k} (-k): no family can reach it",
                param_hint="--tau",
            )

        return oracle_ladder(
            families="bundled" if bundled else str(families),
            k=k,
            conditions=conditions,
            limit=limit,
            max_tokens=max_tokens,
            temperature=temperature,
            families_version=families_version.value,
            release=str(release) if release is not None else None,
            verifier=verifier,
        )

    run_diagnostic(
        "run ladder",
        json_out,
        build,
        model=model,
        view_options=ViewOptions(tau=tau),
        log_dir=log_dir,
        bad_input=(ValueError, SourceError),
    )


def run_ladder_code(
    problems: Annotated[
        str | None,
        typer.Option(help="Problems JSONL (ours or LiveCodeBench-style) or Hub dataset id."),
    ] = None,
    bundled: Annotated[
        bool, typer.Option("--bundled", help="Use the ten shipped problems.")
    ] = False,
    model: Annotated[str, typer.Option(help="Any Inspect model string.")] = EMBEDDED_MODEL,
    k: Annotated[int, typer.Option("-k", min=1, help="Attempts per problem and condition.")] = 8,
    conditions: Annotated[
        str, typer.Option(help="all | comma list of no-help, helper-plan, verified-helpers")
    ] = "all",
    limit: Annotated[int | None, typer.Option(help="Only the first N problems.")] = None,
    time_limit: Annotated[
        float, typer.Option(min=0.1, help="Wall-clock seconds of one attempt's tests.")
    ] = 10.0,
    memory_mb: Annotated[int, typer.Option(min=64, help="Memory limit of one attempt.")] = 1024,
    workers: Annotated[
        int | None, typer.Option(min=1, help="Attempts tested at once (default: CPUs).")
    ] = None,
    max_tokens: Annotated[int, typer.Option(help="Tokens per attempt.")] = 4096,
    temperature: Annotated[float, typer.Option(help="Sampling temperature.")] = 0.7,
    sandbox: Annotated[
        str,
        typer.Option(
            help="Where attempts run: bwrap (bubblewrap here) or an Inspect sandbox type, "
            "TYPE or TYPE:CONFIG (docker, docker:compose.yaml, k8s)."
        ),
    ] = "bwrap",
    allow_unsandboxed: AllowUnsandboxedOption = False,
    log_dir: Annotated[Path, typer.Option(help="Where the Inspect .eval logs go.")] = Path("logs"),
    json_out: JsonOut = False,
) -> None:
    """The code-generation pilot: the help ladder on programming problems, tests as verifier
    (each attempt in its own sandboxed process, judged outside it), then per-attempt and
    problem-level solve rates per condition. Refuses without a working sandbox unless
    --allow-unsandboxed (`gapscope doctor` says what each code-running path has)."""
    from gapscope.lean import SandboxUnavailable
    from gapscope.records import SourceError

    if bundled == (problems is not None):
        raise typer.BadParameter("give exactly one of --problems F or --bundled")

    def build() -> Task:
        from gapscope.ladder import ladder_code

        return ladder_code(
            problems="bundled" if bundled else str(problems),
            k=k,
            conditions=conditions,
            limit=limit,
            time_limit=time_limit,
            memory_mb=memory_mb,
            workers=workers,
            max_tokens=max_tokens,
            temperature=temperature,
            sandbox=sandbox,
            allow_unsandboxed=allow_unsandboxed,
        )

    run_diagnostic(
        "run ladder-code",
        json_out,
        build,
        model=model,
        log_dir=log_dir,
        bad_input=(ValueError, SourceError, SandboxUnavailable),
    )


@ladder_app.command("review")
def review(
    logs: Annotated[list[Path], typer.Argument(help="oracle_ladder .eval logs, one per student.")],
    judge: Annotated[str, typer.Option(help="Inspect model string of the judge.")],
    names: Annotated[
        str | None, typer.Option(help="Comma-separated student names, one per log.")
    ] = None,
    tau: Annotated[int, typer.Option(min=1, help="Outcome threshold of the taxonomy.")] = 1,
    max_attempts: Annotated[
        int, typer.Option(min=1, help="C3 attempts shown to the judge per family.")
    ] = 8,
    max_tokens: Annotated[int, typer.Option(min=1, help="The judge's budget per verdict.")] = 2048,
    remove: Annotated[
        str, typer.Option(help="Labels removed from the category (comma list).")
    ] = "verifier-format,defective-reference",
    cases_out: Annotated[
        Path | None,
        typer.Option(help="Where to write the review cases (default: LOG_DIR/review-cases.json)."),
    ] = None,
    log_dir: Annotated[Path, typer.Option(help="Where the Inspect .eval logs go.")] = Path("logs"),
    json_out: JsonOut = False,
) -> None:
    """The LLM rubric review of every composition-gap family in the logs: one label per family
    (verifier-format, defective-reference, roadmap-omission, genuine-composition), and each
    student's composition-gap share before and after removing the flagged families."""
    from gapscope.analysis import LogError, read_log
    from gapscope.ladder import TASK

    labels = _log_names(names, logs)
    cases_path = cases_out or log_dir / "review-cases.json"
    require_directory(cases_path.parent, "--cases-out")
    removed = _removed(remove)

    def build() -> Task:
        from gapscope.analysis import review_cases
        from gapscope.ladder import ladder_review

        review_set = review_cases([read_log(p, task=TASK) for p in logs], labels, tau)
        if not review_set.cases:
            raise ValueError("the logs hold no composition-gap family: nothing to review")
        cases_path.parent.mkdir(parents=True, exist_ok=True)
        cases_path.write_text(review_set.to_json() + "\n", encoding="utf-8")
        return ladder_review(
            cases=str(cases_path), max_attempts=max_attempts, max_tokens=max_tokens
        )

    def summarize(log: EvalLog) -> View:
        from gapscope.analysis import review_view, summarize

        return review_view([summarize(log, removed)])

    run_diagnostic(
        "ladder review",
        json_out,
        build,
        summarize,
        model=judge,
        log_dir=log_dir,
        bad_input=(ValueError, LogError),
    )


@ladder_app.command("review-report")
def review_report(
    logs: Annotated[list[Path], typer.Argument(help="ladder_review .eval logs, one per judge.")],
    human: Annotated[
        Path | None, typer.Option(help='Human labels (JSONL {"pid", "label"[, "model"]}).')
    ] = None,
    remove: Annotated[
        str, typer.Option(help="Labels removed from the category (comma list).")
    ] = "verifier-format,defective-reference",
    json_out: JsonOut = False,
) -> None:
    """Finished reviews: shares before/after, flag rates, and label agreement (raw, Cohen's
    kappa) between every two judges given and between each judge and ``--human``."""
    import itertools

    from gapscope.analysis import ladder_review

    removed = _removed(remove)
    with command_output("ladder review-report", json_out) as out:
        summaries = read_or_fail(out, lambda: [ladder_review.read(p, removed) for p in logs])
        out.logs.extend(s.log_location for s in summaries)
        try:
            raters = [(f"{s.judge} ({Path(s.log_location).name})", s.labels) for s in summaries]
            if human is not None:
                labels = ladder_review.human_labels(human, summaries[0])
                raters.append((f"human ({human.name})", labels))
            agreements = [
                ladder_review.agreement(a, la, b, lb)
                for (a, la), (b, lb) in itertools.combinations(raters, 2)
            ]
        except ValueError as exc:
            out.fail(exc)
        out.finish(ladder_review.review_view(summaries, agreements=agreements))


def _removed(spec: str) -> frozenset[ReviewLabel]:
    """The ``--remove`` option as labels; a bad name is a bad parameter (exit 2)."""
    from gapscope.ladder import parse_removed

    try:
        return parse_removed(spec)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--remove") from None


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
    families_version: FamiliesVersionOption = FamiliesVersion.CORRECTED,
    tau: Annotated[int, typer.Option(min=1, help="Outcome threshold.")] = 1,
    resamples: Annotated[
        int | None,
        typer.Option(min=100, help="Bootstrap resamples (default: gapscope 2000, authors 1000)."),
    ] = None,
    bootstrap: Annotated[
        BootstrapScheme,
        typer.Option(
            help="Resampling: 'gapscope' (default: PCG64 seeded 0) or 'authors' (their "
            "bootstrap_fingerprint_cis.py: np.random.seed(42), families in pid order; "
            "reproduces Appendix F's tables)."
        ),
    ] = BootstrapScheme.GAPSCOPE,
    ties: Annotated[
        TieRule,
        typer.Option(
            help="Anchor Kendall's tied counts: 'tau-b' (default) or 'stable-sort' (the "
            "authors': ties ranked in the order the runs are given)."
        ),
    ] = TieRule.TAU_B,
    anchor_rule: Annotated[
        AnchorRule,
        typer.Option(
            help="Models each anchor pair's Kendall tau is taken on: 'others' (the paper's: "
            "the models that are neither anchor) or 'all' (anchors included)."
        ),
    ] = AnchorRule.OTHERS,
    match: Annotated[
        Match,
        typer.Option(
            help="Containment's matcher: 'paper' (the authors' present(): raw or "
            "MATH-normalised substring, or an equal number) or 'token' (token-bounded, "
            "stricter: '2' is not found in '12')."
        ),
    ] = Match.PAPER,
    json_out: JsonOut = False,
) -> None:
    """Outcome, gap, control, tau-sensitivity and ranking tables over finished runs.

    Runs are our logs and/or results in the format the OracleLadder authors released
    (``--panel P.jsonl --stage0 S.jsonl``, repeatable, the model named by the records, with
    ``--families``). With two runs (e.g. two checkpoints) it adds the transition matrix.
    """
    from gapscope.analysis import ladder, ladder_view, read_panels

    logs = logs or []
    labels = _log_names(names, logs)
    if not logs and not panel:
        raise typer.BadParameter("give .eval logs and/or --panel/--stage0 pairs")
    with command_output("ladder report", json_out) as out:
        runs = read_or_fail(
            out, lambda: [ladder.read(p, n) for p, n in zip(logs, labels, strict=True)]
        )
        try:
            runs += read_panels(panel or [], stage0 or [], families, families_version)
        except (ValueError, FileNotFoundError, KeyError) as exc:
            out.fail(exc)
        out.logs.extend(r.log_location for r in runs)
        try:
            options = ViewOptions(
                tau=tau,
                n_resamples=resamples,
                anchor_rule=anchor_rule,
                match=match,
                ties=ties,
                bootstrap=bootstrap,
            )
            result = ladder_view(runs, options)
        except ValueError as exc:
            out.fail(exc)
        if panel:
            # a log records its own version; a released panel's is this run's choice
            result.details["families_version"] = families_version.value
        out.finish(result)


@ladder_app.command("compile")
def compile_families(
    teacher: Annotated[str, typer.Option(help="Inspect model string of the teacher.")],
    problems: Annotated[
        str,
        typer.Option(
            help="JSONL with problem, answer (+ pid, solution) per line; with --problem-set, "
            "a copy of that set (JSONL path, else a Hugging Face dataset id)."
        ),
    ],
    out: Annotated[Path, typer.Option(help="Where to write the compiled families (JSONL).")],
    max_attempts: Annotated[
        int, typer.Option(min=1, help="Regenerations allowed per problem after a rejection.")
    ] = 3,
    problem_set: Annotated[
        str | None,
        typer.Option(help="Read --problems as a replication set: math500, aime2024, aime2025."),
    ] = None,
    log_dir: Annotated[Path, typer.Option(help="Where the Inspect .eval logs go.")] = Path("logs"),
    json_out: JsonOut = False,
) -> None:
    """Ask a teacher model to write milestone families; keep the valid, leak-free ones."""
    from gapscope.records import SourceError

    require_directory(out.parent, "--out")

    def build() -> Task:
        from gapscope.ladder import ladder_compile

        refuse_overwriting(out, "--out", [("--problems", Path(problems))])
        return ladder_compile(problems=problems, max_attempts=max_attempts, problem_set=problem_set)

    def summarize(log: EvalLog) -> View:
        """Write the kept families (also after a failed run: finished work is kept)."""
        from gapscope.analysis import compile_funnel

        result = compile_funnel(log)
        kept, funnel = result.kept, result.funnel
        write_output(out, "".join(json.dumps(f, ensure_ascii=False) + "\n" for f in kept))

        def show(console: Console) -> None:
            from gapscope.analysis import print_funnel

            print_funnel("Teacher compilation funnel", funnel, console)
            console.print(f"wrote {len(kept)} families to {out}; log: {log.location}")

        return View(details={"funnel": funnel, "out": str(out)}, show=show)

    run_diagnostic(
        "ladder compile",
        json_out,
        build,
        summarize,
        model=teacher,
        log_dir=log_dir,
        bad_input=(ValueError, FileNotFoundError, SourceError),
    )


@ladder_app.command("screen")
def screen_families(
    anchor_log: Annotated[
        Path, typer.Argument(help="The anchor student's oracle_ladder log (conditions C1,S0).")
    ],
    families: Annotated[Path, typer.Option(help="The compiled families (JSONL) it ran on.")],
    out: Annotated[Path, typer.Option(help="Where to write the screened families (JSONL).")],
    direct_failure_only: Annotated[
        bool,
        typer.Option(
            "--direct-failure-only",
            help="Keep every family the anchor fails directly (the replication sets' screen; "
            "the log needs C1 only).",
        ),
    ] = False,
    json_out: JsonOut = False,
) -> None:
    """The paper's anchor screen: keep families the anchor fails directly in every rollout
    but whose every milestone it solves alone, with at least two tested milestones."""
    from gapscope.analysis import ladder
    from gapscope.ladder import load_families, screen

    require_directory(out.parent, "--out")
    with command_output("ladder screen", json_out) as output:
        refuse_overwriting(out, "--out", [("anchor log", anchor_log), ("--families", families)])
        run = read_or_fail(output, lambda: ladder.read(anchor_log, None))
        output.logs.append(run.log_location)
        try:
            funnel = screen(run.families(), milestone_test=not direct_failure_only)
            loaded = load_families(families)
        except (ValueError, FileNotFoundError, KeyError) as exc:
            output.fail(exc)
        kept = set(funnel.kept)
        chosen = [f.to_dict() for f in loaded.families if f.pid in kept]
        write_output(out, "".join(json.dumps(f, ensure_ascii=False) + "\n" for f in chosen))
        counts = funnel.counts()

        def show(console: Console) -> None:
            from gapscope.analysis import print_funnel

            print_funnel("Anchor screen", counts, console)
            console.print(f"wrote {len(chosen)} families to {out}")

        output.finish(View((), {"funnel": counts, "out": str(out)}, show))


@ladder_app.command("agree")
def agree(
    log_a: Annotated[Path, typer.Argument(help="oracle_ladder log of the model on family set A.")],
    log_b: Annotated[
        Path, typer.Argument(help="Its log on family set B: the same problems, other roadmaps.")
    ],
    names: Annotated[
        str | None, typer.Option(help="Two comma-separated names for the family sets.")
    ] = None,
    tau: Annotated[int, typer.Option(min=1, help="Outcome threshold.")] = 1,
    json_out: JsonOut = False,
) -> None:
    """Teacher or granularity agreement (the paper's Appendix P): one model's runs on two
    family sets of the same problems (a second teacher, or finer roadmaps), families matched
    by pid. Per-family C1/C2/C3 outcome agreement, five-way label agreement under the strict
    and the at-least-half milestone test, and each set's milestone counts and pass fraction.
    """
    from gapscope.analysis import ladder, print_agreement

    labels = names.split(",") if names else ["A", "B"]
    if len(labels) != 2 or labels[0] == labels[1]:
        raise typer.BadParameter("give two distinct names, e.g. --names gpt5,inkling")
    with command_output("ladder agree", json_out) as out:
        a, b = read_or_fail(
            out, lambda: [ladder.read(p, n) for p, n in zip((log_a, log_b), labels, strict=True)]
        )
        out.logs.extend((a.log_location, b.log_location))
        report = ladder.agreement_report(a, b, tau)
        out.finish(View((), report.to_dict(), lambda console: print_agreement(report, console)))


@ladder_app.command("hard100")
def hard100(
    logs: Annotated[
        list[Path] | None, typer.Argument(help="ladder_math_hard100 .eval logs, one per model.")
    ] = None,
    names: Annotated[
        str | None, typer.Option(help="Comma-separated display names, one per log.")
    ] = None,
    panel: Annotated[
        Path | None,
        typer.Option(help="The release's math_hard100_panel[_16k].jsonl (every model in it)."),
    ] = None,
    baseline: Annotated[
        str | None, typer.Option(help="Model whose pass@1 the gains are taken against.")
    ] = None,
    json_out: JsonOut = False,
) -> None:
    """MATH hard-100 (the paper's comparator, Appendix H): pass@1 as the mean correctness over
    the rollouts, pass@k, and with --baseline each model's pass@1 gain in points."""
    from gapscope.analysis import (
        hard100_details,
        print_hard100,
        read_hard100_log,
        read_hard100_panel,
    )
    from gapscope.ladder import Hard100Error

    logs = logs or []
    labels = _log_names(names, logs)
    if not logs and panel is None:
        raise typer.BadParameter("give ladder_math_hard100 logs and/or --panel")
    with command_output("ladder hard100", json_out) as out:
        scores = read_or_fail(
            out, lambda: [read_hard100_log(p, n) for p, n in zip(logs, labels, strict=True)]
        )
        try:
            scores += read_hard100_panel(panel) if panel else []
            details = hard100_details(scores, baseline)
        except (Hard100Error, FileNotFoundError) as exc:
            out.fail(exc)
        out.logs.extend(str(p) for p in logs)
        out.finish(View((), details, lambda console: print_hard100(scores, baseline, console)))


@ladder_app.command("budgets")
def budgets(
    logs: Annotated[
        list[Path],
        typer.Argument(help="oracle_ladder logs: every model once at each of two max_tokens."),
    ],
    names: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated model names, one per log (a model's two runs share one)."
        ),
    ] = None,
    tau: Annotated[int, typer.Option(min=1, help="Outcome threshold.")] = 1,
    json_out: JsonOut = False,
) -> None:
    """Decoding-budget sensitivity (the paper's Table 22): each model's outcome and any-probe
    counts at the two budgets its logs ran at, the change and the any-probe rank at each."""
    from gapscope.analysis import BudgetError, compare_budgets, print_budgets, read_budget_run

    labels = _log_names(names, logs)
    with command_output("ladder budgets", json_out) as out:
        runs = read_or_fail(
            out, lambda: [read_budget_run(p, n) for p, n in zip(logs, labels, strict=True)]
        )
        out.logs.extend(r.run.log_location for r in runs)
        try:
            table = compare_budgets(runs, tau)
        except BudgetError as exc:
            out.fail(exc)
        out.finish(View((), table.to_dict(), lambda console: print_budgets(table, console)))


@ladder_app.command("regrade")
def regrade_rollouts(
    pairs: Annotated[Path, typer.Argument(help='JSONL of {"response", "gold"} records.')],
    out: Annotated[
        Path | None, typer.Option(help="Write every record with both verdicts (JSONL).")
    ] = None,
    timeout: Annotated[float, typer.Option(min=0.1, help="Seconds per slow check.")] = 5.0,
    json_out: JsonOut = False,
) -> None:
    """Grade raw responses with the authors' strict cascade and with gapscope's verifier,
    side by side: the authors' solved counts, and where gapscope would count otherwise."""
    from gapscope.ladder import RegradeError, StrictCascade, regrade_pairs
    from gapscope.records import jsonl_rows
    from gapscope.verify import Verifier

    refuse_overwriting(out, "--out", [("the records", pairs)])
    with command_output("ladder regrade", json_out) as output:
        try:
            rows, bad = jsonl_rows(pairs.read_text(encoding="utf-8"))
            if bad:
                raise RegradeError(f"{pairs}: {bad[0]}")
            cascade, verifier = StrictCascade(timeout), Verifier(timeout_s=timeout)
            try:
                result = regrade_pairs(rows, cascade, verifier)
            finally:
                cascade.close()
                verifier.close()
        except (RegradeError, OSError) as exc:
            output.fail(exc)
        if out is not None:
            text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in result.records)
            write_output(out, text)
        summary = result.summary()

        def show(console: Console) -> None:
            for key, value in summary.items():
                console.print(f"{key}: {value}")

        output.finish(View((), {"summary": summary}, show))
