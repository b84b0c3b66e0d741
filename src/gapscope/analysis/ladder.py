"""OracleLadder logs -> per-family counts -> outcome, gap, control and ranking tables.

The log is the only results format: every rollout is an Inspect sample epoch whose metadata
names its family, condition and milestone, and whose score is the verifier's verdict.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from inspect_ai.scorer import CORRECT, NOANSWER

from gapscope.analysis.logs import read_log, require_task, run_info, sample_score
from gapscope.analysis.profile import GapRow
from gapscope.ladder.anchors import AnchorAgreement, anchor_agreement
from gapscope.ladder.contract import COMPILE_TASK, TASK, CompileStore, ProbeMetadata, RunMetadata
from gapscope.ladder.probes import CONTROLS, LADDER, Condition
from gapscope.ladder.taxonomy import (
    GAP_ORDER,
    OUTCOME_ORDER,
    FamilyCounts,
    LadderOutcome,
    ModelProfile,
    outcome,
    profile,
    tau_sensitivity,
)
from gapscope.stats.proportion import wilson_percent
from gapscope.stats.rank import kendall_tau
from gapscope.stats.resampling import BootstrapCI, bootstrap_ci, ranking_stability

if TYPE_CHECKING:
    from pathlib import Path

    from inspect_ai.log import EvalLog

DIAGNOSTIC = "OracleLadder"


@dataclass(frozen=True)
class Rollout:
    """One graded rollout."""

    pid: str
    condition: Condition
    milestone_index: int | None
    correct: bool


@dataclass
class ModelRun:
    """Everything one log says about one model."""

    name: str
    log_location: str
    rollouts: list[Rollout]
    tested: dict[str, int]
    unanswered: int = 0
    """Rollouts with no ``\\boxed{}`` answer; ``truncated`` of them hit the token cap."""
    truncated: int = 0

    @property
    def notes(self) -> list[str]:
        """What a reader must know before reading the tables: most rollouts gave no answer."""
        n = len(self.rollouts)
        if not n or self.unanswered * 2 <= n:
            return []
        return [
            f"{self.unanswered} of {n} rollouts have no \\boxed{{}} answer "
            f"({self.truncated} hit the token cap): the outcomes measure the format and the "
            "budget more than the reasoning; raise --max-tokens"
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

    def solved_by_condition(self, tau: int = 1) -> dict[Condition, int]:
        """Families with >= tau correct rollouts under each parent condition (specificity)."""
        counts = self.correct_counts()
        return {
            c: sum(counts.get((pid, c, None), 0) >= tau for pid in self.tested)
            for c in (*LADDER, *CONTROLS)
        }

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
            GapRow(
                model=self.name,
                diagnostic=DIAGNOSTIC,
                metric=metric,
                value=100 * k / n,
                ci=wilson_percent(k, n),
                n=n,
                log=self.log_location,
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
            for c in (*LADDER, *CONTROLS)
            if any(r.condition is c for r in self.rollouts)
        }


def model_run(log: EvalLog, name: str | None = None) -> ModelRun:
    """Read one OracleLadder log (every epoch of every sample)."""
    require_task(log, TASK)
    rollouts = []
    unanswered = truncated = 0
    for sample in log.samples or []:
        score = sample_score(sample)
        meta = cast(ProbeMetadata, sample.metadata)
        if score is not None and score.value == NOANSWER:
            unanswered += 1
            truncated += sample.output.stop_reason == "max_tokens"
        rollouts.append(
            Rollout(
                pid=str(meta["pid"]),
                condition=Condition(meta["condition"]),
                milestone_index=meta.get("milestone_index"),
                correct=score is not None and score.value == CORRECT,
            )
        )
    run = cast(RunMetadata, log.eval.metadata or {})
    tested = {str(k): int(v) for k, v in run["tested_milestones"].items()}
    info = run_info(log)
    return ModelRun(name or info.model, info.location, rollouts, tested, unanswered, truncated)


def read(path: Path | str, name: str | None = None) -> ModelRun:
    """Read one OracleLadder log from a file."""
    return model_run(read_log(path, task=TASK), name)


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
    stability: list[dict[str, Any]]
    kendall_accuracy_vs_any_probe: float | None
    transitions: dict[LadderOutcome, dict[LadderOutcome, int]] | None
    anchors: AnchorAgreement | None = None

    def to_dict(self) -> dict[str, Any]:
        def ci(c: BootstrapCI) -> dict[str, float | None]:
            return {"estimate": c.estimate, "low": c.low, "high": c.high}

        return {
            "tau": self.tau,
            "models": {
                name: {
                    "n_families": p.n_families,
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
                    "tau_sensitivity": {
                        str(t): {o.value: n for o, n in row.items()}
                        for t, row in self.tau_table[name].items()
                    },
                }
                for name, p in self.models.items()
            },
            "ranking_stability": self.stability,
            "kendall_tau_direct_accuracy_vs_any_probe": self.kendall_accuracy_vs_any_probe,
            "kendall_tau_composition_gap_across_anchors": (
                {
                    "pairs": [
                        {"a": a, "b": b, "tau": t} for (a, b), t in self.anchors.pairs.items()
                    ],
                    "mean": self.anchors.mean,
                    "screened": self.anchors.screened,
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
    n_resamples: int = 2000,
    seed: int = 0,
) -> LadderReport:
    """All tables for ``runs``; with exactly two runs, also their transition matrix."""
    names = [r.name for r in runs]
    if len(set(names)) != len(names):
        raise ValueError(f"model names must be distinct, got {names}; pass names explicitly")
    rng = np.random.default_rng(seed)
    families = {r.name: r.families() for r in runs}
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
        [
            {"a": s.a, "b": s.b, "a_beats_b": s.a_beats_b, "ties": s.ties}
            for s in ranking_stability(aligned, n_resamples=n_resamples, rng=rng)
        ]
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
            name: bootstrap_ci(values, n_resamples=n_resamples, rng=rng)
            for name, values in solved.items()
        },
        solved_by_condition={r.name: r.solved_by_condition(tau) for r in runs},
        tau_table={name: tau_sensitivity(fams) for name, fams in families.items()},
        direct_accuracy=accuracy,
        stability=stability,
        kendall_accuracy_vs_any_probe=kendall,
        transitions=(
            transition_matrix(families[names[0]], families[names[1]], tau)
            if len(runs) == 2
            else None
        ),
        anchors=anchor_agreement(families, tau),
    )


@dataclass(frozen=True)
class CompileFunnel:
    """A teacher-compilation log: the families kept and how far each problem got."""

    kept: list[dict[str, Any]]
    funnel: dict[str, int]


def compile_funnel(log: EvalLog) -> CompileFunnel:
    """Kept families and the per-stage funnel (plus rejected attempts) of a compile log."""
    from gapscope.ladder.compile import Stage, funnel_counts

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
