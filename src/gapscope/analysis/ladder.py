"""OracleLadder logs -> per-family counts -> outcome, gap, control and ranking tables.

The log is the only results format: every rollout is an Inspect sample epoch whose metadata
names its family, condition and milestone, and whose score is the verifier's verdict.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from inspect_ai.scorer import CORRECT, NOANSWER

from gapscope.analysis.logs import (
    counted_samples,
    malformed_sample,
    read_log,
    require_task,
    run_info,
    sample_score,
)
from gapscope.analysis.profile import GapRow
from gapscope.ladder import (
    COMPILE_TASK,
    CONTROLS,
    GAP_ORDER,
    LADDER,
    OUTCOME_ORDER,
    TASK,
    TAUS,
    Agreement,
    AnchorAgreement,
    AnchorRule,
    CompileStore,
    Condition,
    Containment,
    ContainmentFamily,
    FamilyCounts,
    Gap,
    LadderOutcome,
    Match,
    ModelProfile,
    ProbeMetadata,
    Rate,
    RunMetadata,
    TieRule,
    anchor_agreement,
    family_of,
    measure_containment,
    outcome,
    profile,
    run_agreement,
    tau_sensitivity,
)
from gapscope.stats import (
    BootstrapCI,
    BootstrapScheme,
    McNemarResult,
    PairwiseStability,
    Rng,
    bootstrap_ci,
    default_resamples,
    holm,
    kendall_tau,
    mcnemar_exact,
    ranking_stability,
    scheme_rng,
)

if TYPE_CHECKING:
    from pathlib import Path

    from inspect_ai.log import EvalLog, EvalSample

DIAGNOSTIC = "OracleLadder"


@dataclass(frozen=True)
class Rollout:
    """One graded rollout."""

    pid: str
    condition: Condition
    milestone_index: int | None
    correct: bool


@dataclass
class RunTexts:
    """The texts a log holds beyond the grades, for containment (a released panel has none):
    per family its unaided (C1) completions, its statement (the C1 user turn) and the gold
    answer of each tested milestone (the Stage 0 targets)."""

    attempts: dict[str, list[str]] = field(default_factory=dict)
    statements: dict[str, str] = field(default_factory=dict)
    answers: dict[str, dict[int, str]] = field(default_factory=dict)


@dataclass
class ModelRun:
    """Everything one log says about one model."""

    name: str
    log_location: str
    rollouts: list[Rollout]
    tested: dict[str, int]
    texts: RunTexts | None = None
    status: str = "success"
    notes: list[str] = field(default_factory=list)
    """What the tables leave out or cannot be read without: a run that did not finish (its
    unfinished families), rollouts that mostly gave no ``\\boxed{}`` answer."""
    not_run: int = 0
    """Families the log does not list: left out of ``tested``, never failures."""
    unanswered: tuple[int, str] = (0, "")
    """Families left out of ``tested`` for a rollout the model never answered, and why."""
    unboxed: tuple[int, int] = (0, 0)
    """(rollouts with no ``\\boxed{}`` answer, rollouts read)."""

    def containment_families(self, stage0_tau: int = 1) -> list[ContainmentFamily]:
        """The families with C1 attempts and every tested milestone's answer in the log."""
        if self.texts is None:
            return []
        texts = self.texts
        counts = {f.pid: f for f in self.families()}
        return [
            ContainmentFamily(
                pid=pid,
                statement=texts.statements[pid],
                answers=tuple(texts.answers[pid][i] for i in range(n)),
                solved_alone=tuple(c >= stage0_tau for c in counts[pid].milestones),
                attempts=tuple(texts.attempts[pid]),
            )
            for pid, n in sorted(self.tested.items())
            if texts.attempts.get(pid) and len(texts.answers.get(pid, {})) == n
        ]

    def correct_counts(self) -> dict[tuple[str, Condition, int | None], int]:
        counts: Counter[tuple[str, Condition, int | None]] = Counter()
        for r in self.rollouts:
            counts[(r.pid, r.condition, r.milestone_index)] += int(r.correct)
        return dict(counts)

    def rollouts_per_probe(self) -> int:
        """k: the most rollouts any probe of this run has (the paper's 8)."""
        per_probe = Counter((r.pid, r.condition, r.milestone_index) for r in self.rollouts)
        return max(per_probe.values(), default=0)

    def families(self) -> list[FamilyCounts]:
        """Per-family counts for the taxonomy, in a stable (pid) order."""
        counts = self.correct_counts()
        return [
            FamilyCounts(
                pid=pid,
                c1=counts.get((pid, Condition.C1, None), 0),
                c2=counts.get((pid, Condition.C2, None), 0),
                c3=counts.get((pid, Condition.C3, None), 0),
                milestones=tuple(
                    counts.get((pid, Condition.S0, i), 0) for i in range(self.tested[pid])
                ),
            )
            for pid in sorted(self.tested)
        ]

    def conditions_run(self) -> list[Condition]:
        """The parent conditions (ladder rungs, then controls) this run has rollouts of: a
        run with ``conditions=ladder`` has no control, and a condition it did not run is not
        one it solved nothing under."""
        run = {r.condition for r in self.rollouts}
        return [c for c in (*LADDER, *CONTROLS) if c in run]

    def solved_by_condition(self, tau: int = 1) -> dict[Condition, int]:
        """Families with >= tau correct rollouts under each parent condition that was run
        (specificity)."""
        counts = self.correct_counts()
        return {
            c: sum(counts.get((pid, c, None), 0) >= tau for pid in self.tested)
            for c in self.conditions_run()
        }

    def tau_table(self) -> dict[int, dict[LadderOutcome, int]]:
        """Outcome counts at each of the paper's thresholds (:data:`~gapscope.ladder.TAUS`)
        that k rollouts per probe can reach: above k no family reaches any rung, so those
        rows would only repeat one another."""
        reachable = [t for t in TAUS if t <= self.rollouts_per_probe()] or [1]
        return tau_sensitivity(self.families(), reachable)

    def direct_accuracy(self) -> float:
        """Per-rollout C1 accuracy: what an accuracy-only leaderboard would report."""
        c1 = [r.correct for r in self.rollouts if r.condition is Condition.C1]
        return sum(c1) / len(c1) if c1 else 0.0

    def rows(self, tau: int = 1) -> list[GapRow]:
        """Share of families per outcome level and per gap label, each with a Wilson CI."""
        p = profile(self.families(), tau)
        n = p.n_families
        if not n:
            return []
        counts: list[tuple[str, int]] = [
            (f"outcome {o.value}", p.outcomes[o]) for o in OUTCOME_ORDER
        ]
        counts += [(f"gap {g.value}", p.gaps[g]) for g in GAP_ORDER[1:]]
        counts.append(("any probe", p.any_probe))
        return [
            GapRow.share(
                self.name, DIAGNOSTIC, metric, k, n, self.log_location, self.status, self.unanswered
            )
            for metric, k in counts
        ]

    def outcomes(self, tau: int = 1) -> dict[str, dict[str, bool]]:
        """Per condition, which families were solved (>= tau correct rollouts)."""
        counts = self.correct_counts()
        return {
            f"solved {c.value}": {
                pid: counts.get((pid, c, None), 0) >= tau for pid in sorted(self.tested)
            }
            for c in self.conditions_run()
        }


def model_run(log: EvalLog, name: str | None = None) -> ModelRun:
    """Read one OracleLadder log (every epoch of every sample).

    A family the log does not list (a ``--limit``) is "not run" and left out, with a note
    saying how many. A family with a rollout the model never answered (cancelled, the
    endpoint gone, never started: :func:`~gapscope.analysis.logs.unanswered_cause`) is left
    out too, since its outcome needs all its conditions; the rows say how many and bound
    what they would read had those families failed or passed, so an endpoint that errors on
    the hard items cannot improve the model's score unseen. A rollout that raised for a
    reason of the model's making (the scorer choking on its output) is a failure, with a
    note: were it left out, such output would take its family out of the denominator.
    """
    require_task(log, TASK)
    samples = counted_samples(log)
    errored = [s for s in samples if s.error is not None and sample_score(s) is None]
    rollouts, texts, unboxed, truncated = _read_rollouts(log, samples)
    run = cast(RunMetadata, log.eval.metadata or {})
    tested = {str(k): int(v) for k, v in run["tested_milestones"].items()}
    info = run_info(log)
    notes = [note for note in (info.note(), info.unanswered_note("rollouts")) if note]
    listed = {family_of(str(i)) for i in log.eval.dataset.sample_ids or []}
    not_run = set(tested) - (listed or {family_of(str(s.id)) for s in log.samples or []})
    partial = _unfinished_families(log, samples) & set(tested) - not_run
    if partial and len(partial) + len(not_run) < len(tested):  # else no table to explain
        notes.append(
            f"{info.location}: {len(partial)} of {len(tested)} families have a rollout the "
            f"model never answered ({info.unanswered.short()}) and are left out of the tables; "
            f"they are over the {len(tested) - len(partial) - len(not_run)} answered in full"
        )
    if errored:
        message = (errored[0].error.message if errored[0].error else "").splitlines()
        notes.append(
            f"{info.location}: {len(errored)} rollouts of "
            f"{len({family_of(str(e.id)) for e in errored})} families errored (first: "
            f"{message[0][:200] if message else 'no message'}) and count as failures"
        )
    if not_run:
        notes.append(
            f"{info.location}: {len(not_run)} of {len(tested)} families were not run (the "
            "log lists no sample of them) and are left out, not counted as failures; the "
            f"tables and tests are over the {len(tested) - len(not_run) - len(partial)} that ran"
        )
    tested = {pid: n for pid, n in tested.items() if pid not in not_run | partial}
    rollouts = [r for r in rollouts if r.pid in tested]
    if mostly_unboxed(unboxed, len(samples)):
        notes.append(
            f"{unboxed} of {len(samples)} rollouts have no \\boxed{{}} answer "
            f"({truncated} hit the token cap): the outcomes measure the format and the "
            "budget more than the reasoning; raise --max-tokens"
        )
    return ModelRun(
        name or info.model,
        info.location,
        rollouts,
        tested,
        texts,
        info.status,
        notes,
        not_run=len(not_run),
        unanswered=(len(partial), f"{_families(len(partial))} {info.unanswered.short()}"),
        unboxed=(unboxed, len(samples)),
    )


def mostly_unboxed(unboxed: int, rollouts: int) -> bool:
    """Whether most rollouts gave no ``\\boxed{}`` answer: the outcomes then measure the
    format and the token budget more than the reasoning."""
    return unboxed * 2 > rollouts > 0


def verdict(run: ModelRun, row: GapRow) -> str:
    """Where the model breaks, for the report's first table: the commonest gap label at
    tau = 1 (the rows' threshold) and on how many families, or that every family was solved
    directly; no gap is named when most rollouts gave no ``\\boxed{}`` answer."""
    if mostly_unboxed(*run.unboxed):
        bad, rollouts = run.unboxed
        return f"no gap read: {bad} of {rollouts} rollouts have no \\boxed{{}} answer"
    p = profile(run.families())
    gaps = {g: k for g, k in p.gaps.items() if k and g is not Gap.NONE}
    if not gaps:
        return f"no gap: every family solved directly ({p.n_families})" if p.n_families else ""
    top = max(gaps.values())
    named = " and ".join(g.value for g, k in gaps.items() if k == top)
    return f"{named} gap on {top} of {p.n_families} families" + (
        " each" if " and " in named else ""
    )


def _families(n: int) -> str:
    return f"{n} family" if n == 1 else f"{n} families"


def _read_rollouts(
    log: EvalLog, samples: Sequence[EvalSample]
) -> tuple[list[Rollout], RunTexts, int, int]:
    """Each sample's rollout and the texts containment reads, with how many rollouts gave no
    ``\\boxed{}`` answer and how many of those hit the token cap."""
    rollouts = []
    texts = RunTexts()
    unboxed = truncated = 0
    for sample in samples:
        with malformed_sample(log, sample):
            score = sample_score(sample)
            meta = cast(ProbeMetadata, sample.metadata)
            if score is not None and score.value == NOANSWER:
                unboxed += 1
                truncated += sample.output.stop_reason == "max_tokens"
            rollout = Rollout(
                pid=str(meta["pid"]),
                condition=Condition(meta["condition"]),
                milestone_index=meta.get("milestone_index"),
                correct=score is not None and score.value == CORRECT,
            )
            rollouts.append(rollout)
            if rollout.condition is Condition.C1:
                texts.attempts.setdefault(rollout.pid, []).append(sample.output.completion)
                prompt = sample.input if isinstance(sample.input, str) else sample.input[-1].text
                texts.statements[rollout.pid] = prompt
            elif rollout.condition is Condition.S0 and rollout.milestone_index is not None:
                gold = sample.target if isinstance(sample.target, str) else sample.target[0]
                texts.answers.setdefault(rollout.pid, {})[rollout.milestone_index] = gold
    return rollouts, texts, unboxed, truncated


def _unfinished_families(log: EvalLog, scored: Sequence[EvalSample]) -> set[str]:
    """Families with a sample (of any epoch) that the log lists but did not score."""
    done = {(str(s.id), s.epoch) for s in scored}
    epochs = range(1, (log.eval.config.epochs or 1) + 1)
    return {
        family_of(str(i))
        for i in log.eval.dataset.sample_ids or []
        for epoch in epochs
        if (str(i), epoch) not in done
    }


def read(path: Path | str, name: str | None = None) -> ModelRun:
    """Read one OracleLadder log from a file."""
    return model_run(read_log(path, task=TASK), name)


def containment_dict(result: Containment) -> dict[str, Any]:
    """``--json`` shape of a containment readout: hits, pairs and rate per subset."""

    def rate(r: Rate) -> dict[str, Any]:
        return {"hits": r.hits, "pairs": r.pairs, "rate": r.rate}

    return {
        "match": result.match.value,
        "families": result.families,
        "attempts": result.attempts,
        "skipped_milestones": result.skipped,
        "subsets": {
            name: {"milestones": s.milestones, "own": rate(s.own), "control": rate(s.control)}
            for name, s in result.subsets.items()
        },
    }


MATCHED_VS_CONTROL: tuple[tuple[Condition, Condition], ...] = (
    (Condition.C2, Condition.C2_RANDOM),
    (Condition.C2, Condition.C2_GENERIC),
    (Condition.C3, Condition.C3_MISMATCHED),
)
"""Each matched help level and the control that corrupts it (seed Section 2, Appendix N)."""


@dataclass(frozen=True)
class SpecificityTest:
    """Matched help vs its control on the same families: exact McNemar, Holm-adjusted.

    ``test.b`` counts families solved with the matched help only, ``test.c`` with the control
    only; Holm's correction runs over the tests of one model.
    """

    matched: Condition
    control: Condition
    test: McNemarResult
    p_holm: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "matched": self.matched.value,
            "control": self.control.value,
            "families": self.test.n,
            "matched_only": self.test.b,
            "control_only": self.test.c,
            "p_value": self.test.p_value,
            "p_holm": self.p_holm,
        }


def specificity_tests(run: ModelRun, tau: int = 1) -> list[SpecificityTest]:
    """McNemar's exact test of each matched condition against its control, per family
    (solved = at least ``tau`` correct rollouts), for the pairs the run has both of.

    Per family and paired, as the paper's replication tests (Appendix N: on AIME 2024/25 the
    matched roadmap solves 17 of 38 families, each control 5, p = 0.004 and 0.002).
    """
    solved = run.outcomes(tau)
    present = [
        (m, c)
        for m, c in MATCHED_VS_CONTROL
        if f"solved {m.value}" in solved and f"solved {c.value}" in solved
    ]
    results = [
        mcnemar_exact(
            list(solved[f"solved {m.value}"].values()), list(solved[f"solved {c.value}"].values())
        )
        for m, c in present
    ]
    adjusted = holm([r.p_value for r in results])
    return [
        SpecificityTest(m, c, r, p) for (m, c), r, p in zip(present, results, adjusted, strict=True)
    ]


def transition_matrix(
    before: Sequence[FamilyCounts], after: Sequence[FamilyCounts], tau: int = 1
) -> dict[LadderOutcome, dict[LadderOutcome, int]]:
    """How families move between outcome states from one run to another (common pids)."""
    a = {f.pid: outcome(f, tau) for f in before}
    b = {f.pid: outcome(f, tau) for f in after}
    matrix = {row: dict.fromkeys(OUTCOME_ORDER, 0) for row in OUTCOME_ORDER}
    for pid in sorted(set(a) & set(b)):
        matrix[a[pid]][b[pid]] += 1
    return matrix


@dataclass(frozen=True)
class LadderReport:
    """The tables of ``gapscope ladder report``."""

    tau: int
    models: dict[str, ModelProfile]
    any_probe_ci: dict[str, BootstrapCI]
    solved_by_condition: dict[str, dict[Condition, int]]
    tau_table: dict[str, dict[int, dict[LadderOutcome, int]]]
    direct_accuracy: dict[str, float]
    stability: list[PairwiseStability]
    kendall_accuracy_vs_any_probe: float | None
    transitions: dict[LadderOutcome, dict[LadderOutcome, int]] | None
    anchors: AnchorAgreement | None = None
    specificity: dict[str, list[SpecificityTest]] = field(default_factory=dict)
    containment: dict[str, Containment] = field(default_factory=dict)
    statuses: dict[str, str] = field(default_factory=dict)
    """Each model's run status (``success`` unless the run did not finish)."""
    not_run: dict[str, int] = field(default_factory=dict)
    """Each model's families with no scored sample: in no table, test or ranking."""
    bootstrap: BootstrapScheme = BootstrapScheme.GAPSCOPE
    n_resamples: int = 0

    def to_dict(self) -> dict[str, Any]:
        def ci(c: BootstrapCI) -> dict[str, float | None]:
            return {"estimate": c.estimate, "low": c.low, "high": c.high}

        return {
            "tau": self.tau,
            "models": {
                name: {
                    "status": self.statuses.get(name, "success"),
                    "n_families": p.n_families,
                    "families_not_run": self.not_run.get(name, 0),
                    "outcomes": {o.value: n for o, n in p.outcomes.items()},
                    "gaps": {g.value: n for g, n in p.gaps.items()},
                    "any_probe": p.any_probe,
                    "any_probe_ci95": ci(self.any_probe_ci[name]),
                    "stage0_pass": p.stage0_pass,
                    "milestone_pass_fraction": p.milestone_pass_fraction,
                    "direct_accuracy": self.direct_accuracy[name],
                    "solved_by_condition": {
                        c.value: n for c, n in self.solved_by_condition[name].items()
                    },
                    "specificity_tests": [t.to_dict() for t in self.specificity.get(name, [])],
                    "containment": (
                        containment_dict(self.containment[name])
                        if name in self.containment
                        else None
                    ),
                    "tau_sensitivity": {
                        str(t): {o.value: n for o, n in row.items()}
                        for t, row in self.tau_table[name].items()
                    },
                }
                for name, p in self.models.items()
            },
            "bootstrap": {"scheme": self.bootstrap.value, "n_resamples": self.n_resamples},
            "ranking_stability": [
                {"a": s.a, "b": s.b, "a_beats_b": s.a_beats_b, "ties": s.ties}
                for s in self.stability
            ],
            "kendall_tau_direct_accuracy_vs_any_probe": self.kendall_accuracy_vs_any_probe,
            "kendall_tau_composition_gap_across_anchors": (
                {
                    "rule": self.anchors.rule.value,
                    "ties": self.anchors.ties.value,
                    "pairs": [
                        {"a": p.a, "b": p.b, "compared": list(p.compared), "tau": p.tau}
                        for p in self.anchors.pairs
                    ],
                    "mean": self.anchors.mean,
                    "screened": self.anchors.screened,
                    "rankings": self.anchors.rankings,
                }
                if self.anchors
                else None
            ),
            "transition_matrix": (
                {
                    a.value: {b.value: n for b, n in row.items()}
                    for a, row in self.transitions.items()
                }
                if self.transitions
                else None
            ),
        }


def build_report(
    runs: Sequence[ModelRun],
    *,
    tau: int = 1,
    n_resamples: int | None = None,
    seed: int = 0,
    anchor_rule: AnchorRule = AnchorRule.OTHERS,
    match: Match = Match.PAPER,
    ties: TieRule = TieRule.TAU_B,
    bootstrap: BootstrapScheme = BootstrapScheme.GAPSCOPE,
) -> LadderReport:
    """All tables for ``runs``; with exactly two runs, also their transition matrix.

    ``anchor_rule`` picks the models each anchor pair is compared on (default: the paper's);
    ``match`` the containment matcher (default: the authors'); ``ties`` how the anchor
    Kendall ranks tied counts; ``bootstrap`` whose resampling (``seed`` and ``n_resamples``,
    default the scheme's count, apply to ``gapscope``'s; the authors' has its own seed).
    Raises ValueError for a run with no family (one stopped before it finished any): its
    tables would be empty rows of zeros.
    """
    for run in runs:
        if not run.tested:
            why = "; ".join(run.notes) or "its log lists no family"
            raise ValueError(f"{run.name}: no family to report ({why})")
    names = [r.name for r in runs]
    if len(set(names)) != len(names):
        raise ValueError(f"model names must be distinct, got {names}; pass names explicitly")
    n_resamples = n_resamples or default_resamples(bootstrap)
    rng = scheme_rng(bootstrap, seed)

    def stream() -> Rng:
        # ours: one stream, each statistic drawn in turn; the authors': the same resamples
        # behind every statistic, as their single loop has
        return rng if bootstrap is BootstrapScheme.GAPSCOPE else scheme_rng(bootstrap, seed)

    families = {r.name: _resampling_order(r.families(), bootstrap) for r in runs}
    solved = {
        name: [float(outcome(f, tau) is not LadderOutcome.UNRECOVERED) for f in fams]
        for name, fams in families.items()
    }
    common = sorted(set.intersection(*(set(r.tested) for r in runs))) if runs else []
    aligned = {
        name: [v for f, v in zip(families[name], solved[name], strict=True) if f.pid in common]
        for name in families
    }
    stability = (
        ranking_stability(aligned, n_resamples=n_resamples, rng=stream())
        if len(runs) >= 2 and common
        else []
    )
    profiles = {name: profile(fams, tau) for name, fams in families.items()}
    accuracy = {r.name: r.direct_accuracy() for r in runs}
    kendall = None
    if len(runs) >= 2:
        try:
            kendall = kendall_tau(accuracy, {n: float(p.any_probe) for n, p in profiles.items()})
        except ValueError:
            kendall = None
    return LadderReport(
        tau=tau,
        models=profiles,
        any_probe_ci={
            name: bootstrap_ci(values, n_resamples=n_resamples, rng=stream())
            for name, values in solved.items()
        },
        solved_by_condition={r.name: r.solved_by_condition(tau) for r in runs},
        tau_table={r.name: r.tau_table() for r in runs},
        direct_accuracy=accuracy,
        stability=stability,
        kendall_accuracy_vs_any_probe=kendall,
        transitions=(
            transition_matrix(families[names[0]], families[names[1]], tau)
            if len(runs) == 2
            else None
        ),
        anchors=anchor_agreement(families, tau, anchor_rule, ties),
        specificity={r.name: specificity_tests(r, tau) for r in runs},
        containment={
            r.name: measure_containment(fams, match)
            for r in runs
            if (fams := r.containment_families())
        },
        statuses={r.name: r.status for r in runs},
        not_run={r.name: r.not_run for r in runs},
        bootstrap=bootstrap,
        n_resamples=n_resamples,
    )


def _resampling_order(
    families: list[FamilyCounts], bootstrap: BootstrapScheme
) -> list[FamilyCounts]:
    """The authors resample families by position in pid order; ours in the run's order."""
    if bootstrap is BootstrapScheme.AUTHORS:
        return sorted(families, key=lambda f: f.pid)
    return families


def share(k: int, n: int) -> float | None:
    """``k`` of ``n`` as a share; None for none of none."""
    return k / n if n else None


@dataclass(frozen=True)
class AgreementReport:
    """``gapscope ladder agree``: one model on two family sets (``a`` and ``b``, the runs'
    names) of the same problems; rules in :mod:`gapscope.ladder.agreement`."""

    a: str
    b: str
    result: Agreement

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` details."""
        result = self.result
        return {
            "a": self.a,
            "b": self.b,
            "tau": result.tau,
            "matched_families": len(result.families),
            "only_a": list(result.only_a),
            "only_b": list(result.only_b),
            "outcome_agreement": [
                {
                    "condition": o.condition.value,
                    "families": o.families,
                    "agree": o.agree,
                    "share": share(o.agree, o.families),
                    "both": o.both,
                    "only_a": o.only_a,
                    "only_b": o.only_b,
                    "neither": o.neither,
                }
                for o in result.outcomes
            ],
            "label_agreement": [
                {
                    "milestone_test": la.test.value,
                    "labelled": la.labelled,
                    "agree": la.agree,
                    "share": share(la.agree, la.labelled),
                    "disagree_same_outcome": la.same_outcome,
                }
                for la in result.labels
            ],
            "milestones": {
                name: {
                    "tested": m.tested,
                    "passed": m.passed,
                    "fraction_passed": m.fraction_passed,
                    "mean_tested_per_family": m.mean_per_family,
                    "mean_fraction_passed_per_family": m.mean_fraction_passed,
                }
                for name, m in zip((self.a, self.b), result.milestones, strict=True)
            },
            "families": [
                {
                    "pid": f.pid,
                    "tested": list(f.tested),
                    "passed": list(f.passed),
                    "outcome": [o.value for o in f.outcome],
                    "label_strict": [g.value for g in f.strict],
                    "label_half": [g.value for g in f.half],
                }
                for f in result.families
            ],
        }


def agreement_report(a: ModelRun, b: ModelRun, tau: int = 1) -> AgreementReport:
    """``gapscope ladder agree``: one model on two family sets of the same problems."""
    return AgreementReport(a.name, b.name, run_agreement(a.families(), b.families(), tau))


@dataclass(frozen=True)
class CompileFunnel:
    """A teacher-compilation log: the families kept and how far each problem got."""

    kept: list[dict[str, Any]]
    funnel: dict[str, int]


def compile_funnel(log: EvalLog) -> CompileFunnel:
    """Kept families and the per-stage funnel (plus rejected attempts) of a compile log."""
    from gapscope.ladder import Stage, funnel_counts

    require_task(log, COMPILE_TASK)
    kept: list[dict[str, Any]] = []
    reached: list[Stage | None] = []
    rejected_attempts = 0
    for sample in log.samples or []:
        store = cast(CompileStore, sample.store)
        failures = store.get("failures", [])
        family = store.get("family")
        rejected_attempts += len(failures)
        if family:
            kept.append(family)
            reached.append(None)
        else:
            reached.append(Stage(failures[-1]["stage"]) if failures else Stage.REPLIED)
    return CompileFunnel(kept, funnel_counts(reached) | {"rejected_attempts": rejected_attempts})
