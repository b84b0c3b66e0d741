"""The terminal tables of OracleLadder: ``ladder report`` (a
:class:`~gapscope.analysis.ladder.LadderReport`, one table per step of :data:`LADDER_TABLES`) and
``ladder agree`` (an :class:`~gapscope.analysis.ladder.AgreementReport`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.table import Table

from gapscope.analysis.ladder import share
from gapscope.analysis.terminal import percent
from gapscope.ladder import CONTROLS, GAP_ORDER, LADDER, OUTCOME_ORDER, AnchorRule, MilestoneTest

if TYPE_CHECKING:
    from rich.console import Console

    from gapscope.analysis.ladder import AgreementReport, LadderReport
    from gapscope.ladder import AnchorAgreement, Rate


def print_ladder(report: LadderReport, console: Console) -> None:
    """The OracleLadder report's tables, in the order of :data:`LADDER_TABLES` (a table with
    nothing to show is left out)."""
    for table in LADDER_TABLES:
        table(report, console)


def _outcome_label(report: LadderReport, name: str) -> str:
    """A model's row label: its name, the run's status when it did not finish, and how many
    families were not run."""
    status = report.statuses.get(name, "success")
    label = name if status == "success" else f"{name} (run {status})"
    if not_run := report.not_run.get(name, 0):
        label += f" ({not_run} families not run)"
    return label


def _print_outcomes(report: LadderReport, console: Console) -> None:
    """Families per outcome level, any probe with its bootstrap CI, Stage 0 and C1 accuracy."""
    outcomes = Table(title=f"OracleLadder outcomes (tau = {report.tau})")
    outcomes.add_column("model")
    for o in OUTCOME_ORDER:
        outcomes.add_column(o.value, justify="right")
    for col in ("any probe [95% CI]", "Stage 0 pass", "milestones passed", "C1 acc"):
        outcomes.add_column(col, justify="right")
    for name, p in report.models.items():
        ci = report.any_probe_ci[name]
        interval = "n/a" if ci.low is None else f"{ci.low:.0f}, {ci.high:.0f}"
        outcomes.add_row(
            _outcome_label(report, name),
            *(str(p.outcomes[o]) for o in OUTCOME_ORDER),
            f"{p.any_probe}/{p.n_families} [{interval}]",
            str(p.stage0_pass),
            f"{100 * p.milestone_pass_fraction:.1f}%",
            f"{100 * report.direct_accuracy[name]:.1f}%",
        )
    console.print(outcomes)


def _print_gaps(report: LadderReport, console: Console) -> None:
    """The five-way gap labels of the families a model does not solve directly."""
    gaps = Table(title="Five-way gap labels (families not solved directly)")
    gaps.add_column("model")
    for g in GAP_ORDER[1:]:
        gaps.add_column(g.value, justify="right")
    for name, p in report.models.items():
        gaps.add_row(name, *(str(p.gaps[g]) for g in GAP_ORDER[1:]))
    console.print(gaps)


def _print_solved_by_condition(report: LadderReport, console: Console) -> None:
    """Families solved under each condition, help and controls (how specific the help is):
    a column per condition some model ran, ``not run`` where this one did not."""
    run = {c for solved in report.solved_by_condition.values() for c in solved}
    conditions = [c for c in (*LADDER, *CONTROLS) if c in run]
    controls = Table(title="Families solved per condition (specificity of the help)")
    controls.add_column("model")
    for c in conditions:
        controls.add_column(c.value, justify="right")
    for name in report.models:
        solved = report.solved_by_condition[name]
        controls.add_row(name, *(str(solved[c]) if c in solved else "not run" for c in conditions))
    console.print(controls)


def _print_specificity(report: LadderReport, console: Console) -> None:
    """Each matched help against its control: exact McNemar, Holm-adjusted per model."""
    tests = [(name, t) for name in report.models for t in report.specificity.get(name, [])]
    if not tests:
        return
    table = Table(title="Matched help vs its control: exact McNemar on per-family outcomes")
    for col in ("model", "matched", "control"):
        table.add_column(col)
    for col in ("families", "matched only", "control only", "p", "Holm p"):
        table.add_column(col, justify="right")
    for name, t in tests:
        table.add_row(
            name,
            t.matched.value,
            t.control.value,
            str(t.test.n),
            str(t.test.b),
            str(t.test.c),
            f"{t.test.p_value:.3g}",
            f"{t.p_holm:.3g}",
        )
    console.print(table)


def _rate_cell(rate: Rate) -> str:
    """``hits/pairs (rate)`` of a containment rate."""
    return f"{rate.hits}/{rate.pairs} ({percent(rate.rate)})"


def _print_containment(report: LadderReport, console: Console) -> None:
    """Milestone answers found in the model's unaided attempts: its own problem's against
    other problems' (the control), per subset of milestones."""
    contained = [
        (name, report.containment[name]) for name in report.models if name in report.containment
    ]
    if not contained:
        return
    matchers = sorted({c.match.value for _, c in contained})
    table = Table(
        title="Milestone answers in unaided (C1) attempts: own problem vs other problems "
        f"(match: {', '.join(matchers)})"
    )
    for col in ("model", "subset"):
        table.add_column(col)
    for col in ("milestones", "own problem", "other problems"):
        table.add_column(col, justify="right")
    for name, c in contained:
        for subset, s in c.subsets.items():
            table.add_row(name, subset, str(s.milestones), _rate_cell(s.own), _rate_cell(s.control))
    console.print(table)


def _print_tau_sensitivity(report: LadderReport, console: Console) -> None:
    """Outcome counts at each threshold tau of 1..5 the model's k rollouts can reach."""
    taus = Table(title="Threshold sensitivity: outcome counts at tau = 1..min(5, k)")
    taus.add_column("model")
    taus.add_column("tau", justify="right")
    for o in OUTCOME_ORDER:
        taus.add_column(o.value, justify="right")
    for name in report.models:
        for t, row in report.tau_table[name].items():
            taus.add_row(name, str(t), *(str(row[o]) for o in OUTCOME_ORDER))
    console.print(taus)


def _print_rankings(report: LadderReport, console: Console) -> None:
    """How often A beats B over family resamples, and Kendall's tau of C1 accuracy against
    the any-probe ranking (each where it is defined)."""
    if report.stability:
        stab = Table(title="Ranking stability: share of family resamples where A beats B")
        for col in ("A", "B", "A beats B", "ties"):
            stab.add_column(col)
        for s in report.stability:
            stab.add_row(s.a, s.b, f"{100 * s.a_beats_b:.0f}%", f"{100 * s.ties:.0f}%")
        console.print(stab)
    if report.kendall_accuracy_vs_any_probe is not None:
        console.print(
            "Kendall tau (C1 accuracy vs any-probe ranking): "
            f"{report.kendall_accuracy_vs_any_probe:+.2f}"
        )


def _print_anchors(report: LadderReport, console: Console) -> None:
    """Composition-gap ranking agreement between every two anchors, then each model's
    composition-gap count on each anchor's screen."""
    anchors = report.anchors
    if anchors is None:
        return
    compared_on = (
        "the models that are neither anchor"
        if anchors.rule is AnchorRule.OTHERS
        else "every model, anchors included"
    )
    table = Table(
        title="Composition-gap ranking agreement between anchors (Kendall tau-b, "
        f"compared on {compared_on})"
    )
    for col in ("anchor A", "anchor B", "models compared", "tau"):
        table.add_column(col)
    for pair in anchors.pairs:
        tau = "undefined" if pair.tau is None else f"{pair.tau:+.2f}"
        table.add_row(pair.a, pair.b, ", ".join(pair.compared), tau)
    console.print(table)
    _print_anchor_screens(anchors, console)
    if anchors.mean is not None:
        console.print(f"mean over anchor pairs: {anchors.mean:+.2f}")


def _print_anchor_screens(anchors: AnchorAgreement, console: Console) -> None:
    """Per anchor: the families its screen keeps and each model's composition-gap count."""
    ranks = Table(title="Composition-gap count of each model (columns) on each anchor's screen")
    ranks.add_column("anchor")
    ranks.add_column("screened", justify="right")
    for model in anchors.rankings:
        ranks.add_column(model, justify="right")
    for anchor, row in anchors.rankings.items():
        ranks.add_row(anchor, str(anchors.screened[anchor]), *(f"{row[m]:.0f}" for m in row))
    console.print(ranks)


def _print_transitions(report: LadderReport, console: Console) -> None:
    """With two runs: how families move between outcome levels from the first to the second."""
    if not report.transitions:
        return
    names = list(report.models)
    trans = Table(title=f"Transitions {names[0]} (rows) -> {names[1]} (columns)")
    trans.add_column("")
    for o in OUTCOME_ORDER:
        trans.add_column(o.value, justify="right")
    for before, row in report.transitions.items():
        trans.add_row(before.value, *(str(row[o]) for o in OUTCOME_ORDER))
    console.print(trans)


LADDER_TABLES: tuple[Callable[[LadderReport, Console], None], ...] = (
    _print_outcomes,
    _print_gaps,
    _print_solved_by_condition,
    _print_specificity,
    _print_containment,
    _print_tau_sensitivity,
    _print_rankings,
    _print_anchors,
    _print_transitions,
)
"""The steps of ``ladder report``'s terminal output, in the order they print."""


def print_agreement(report: AgreementReport, console: Console) -> None:
    """``ladder agree``: outcome and label agreement, milestones of both family sets."""
    a, b, result = report.a, report.b, report.result
    console.print(
        f"{len(result.families)} families in both {a} and {b}"
        f" ({len(result.only_a)} only in {a}, {len(result.only_b)} only in {b})"
    )
    table = Table(title=f"Per-family outcome agreement (solved = >= {result.tau} correct)")
    table.add_column("condition")
    for col in ("agree", "share", "both", f"{a} only", f"{b} only", "neither"):
        table.add_column(col, justify="right")
    for o in result.outcomes:
        table.add_row(
            o.condition.value,
            f"{o.agree}/{o.families}",
            percent(share(o.agree, o.families)),
            *(str(n) for n in (o.both, o.only_a, o.only_b, o.neither)),
        )
    console.print(table)
    table = Table(title="Five-way label agreement (families neither solves directly)")
    table.add_column("milestone test")
    for col in ("agree", "share", "disagree, same outcome"):
        table.add_column(col, justify="right")
    for la in result.labels:
        table.add_row(
            "every milestone" if la.test is MilestoneTest.STRICT else "at least half",
            f"{la.agree}/{la.labelled}",
            percent(share(la.agree, la.labelled)),
            str(la.same_outcome),
        )
    console.print(table)
    _print_agreement_milestones(report, console)


def _print_agreement_milestones(report: AgreementReport, console: Console) -> None:
    """Each family set's milestones: tested, passed and the fractions (labels compare only
    at matched granularity)."""
    table = Table(title="Milestones of each family set (compare labels at matched granularity)")
    table.add_column("family set")
    for col in ("tested", "per family", "passed", "fraction passed", "mean per family"):
        table.add_column(col, justify="right")
    names = (report.a, report.b)
    for name, m in zip(names, report.result.milestones, strict=True):
        table.add_row(
            name,
            str(m.tested),
            f"{m.mean_per_family:.1f}",
            str(m.passed),
            percent(m.fraction_passed),
            percent(m.mean_fraction_passed),
        )
    console.print(table)
