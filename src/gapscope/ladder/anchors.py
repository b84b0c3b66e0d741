"""The anchor screen and how much the composition-gap ranking depends on the anchor.

The paper's diagnostic set is screened by one anchor student (Qwen3-8B-Base): a family stays
when the anchor fails the parent in every direct attempt and solves every tested milestone
alone at least once, and when it has at least two tested milestones (seed Appendix B: 1,024
compiled -> 731 screened -> 354). Category shares therefore depend on the anchor. The paper
checks this by re-screening with each panel model as anchor and comparing the models'
composition-gap rankings between every two anchors with Kendall's tau (6 models: 15 anchor
pairs, mean +0.80 with the 16K milestone test, +0.62 with the 4K one), each pair on the
rankings of the four models that are neither anchor. Both are pure functions of per-family
counts, so they run on our logs and on the authors' released panel.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from gapscope.ladder.taxonomy import FamilyCounts, Gap, gap, passes_stage0
from gapscope.stats import kendall_tau, stable_ranks

MIN_TESTED_MILESTONES = 2
"""The paper's last screen: at least two tested (non-INTEGRATE) milestones."""


def passes_anchor_screen(counts: FamilyCounts) -> bool:
    """The anchor fails the parent in every direct attempt and passes the milestone test."""
    return counts.c1 == 0 and passes_stage0(counts)


@dataclass(frozen=True)
class ScreenFunnel:
    """How many families survive each screen, and the pids kept (in input order).

    The milestone-test and milestone-count steps are None when the screen skipped them (the
    replication sets' direct-failure screen).
    """

    compiled: int
    anchor_fails_parent: int
    anchor_passes_milestones: int | None
    enough_milestones: int | None
    kept: tuple[str, ...]

    def counts(self) -> dict[str, int]:
        steps = {
            "compiled": self.compiled,
            "anchor_fails_parent": self.anchor_fails_parent,
            "anchor_passes_milestone_test": self.anchor_passes_milestones,
            f"at_least_{MIN_TESTED_MILESTONES}_tested_milestones": self.enough_milestones,
            "kept": len(self.kept),
        }
        return {step: n for step, n in steps.items() if n is not None}


def screen(anchor: Sequence[FamilyCounts], milestone_test: bool = True) -> ScreenFunnel:
    """The paper's screen over the anchor's counts on compiled families.

    With ``milestone_test`` (the main set's screen, Appendix B) ``anchor`` needs C1 and
    Stage 0 counts of every family (a run with ``--conditions C1,S0``). Without it, only the
    direct failure is required: the screen of the replication sets (Appendix N: Qwen3-8B's
    direct-failure screen keeps 7% of MATH500 and 63% of AIME 2024/25, families whose
    milestone test the anchor mostly fails), which needs C1 alone.
    """
    fails = [f for f in anchor if f.c1 == 0]
    if not milestone_test:
        return ScreenFunnel(len(anchor), len(fails), None, None, tuple(f.pid for f in fails))
    solvable = [f for f in fails if passes_stage0(f)]
    kept = [f for f in solvable if len(f.milestones) >= MIN_TESTED_MILESTONES]
    return ScreenFunnel(
        compiled=len(anchor),
        anchor_fails_parent=len(fails),
        anchor_passes_milestones=len(solvable),
        enough_milestones=len(kept),
        kept=tuple(f.pid for f in kept),
    )


class AnchorRule(StrEnum):
    """Which models a pair of anchors is compared on."""

    OTHERS = "others"
    """The paper's (Appendix B): only the models that are neither anchor. An anchor's screen
    keeps the families it cannot solve directly but can decompose, so on its own screen the
    anchor is ranked by how often it fails exactly there; that rank is selection, not
    evidence about the ranking."""
    ALL = "all"
    """Every model, the two anchors included (gapscope before issue 20). Kept to show how much
    the anchors' own ranks move the statistic."""


class TieRule(StrEnum):
    """How two models with the same composition-gap count are ranked before Kendall's tau."""

    TAU_B = "tau-b"
    """The default: a tie stays a tie and tau-b corrects for it, so the statistic does not
    depend on the order the models were listed in."""
    STABLE_SORT = "stable-sort"
    """The authors' (``multi_anchor_sensitivity.py``): rank by a stable descending sort, tied
    models in the order given (the panel's), then tau on those ranks. On the released panel
    read as published no counts tie and both rules give +0.800 / +0.622; read corrected,
    counts tie and the rules differ (16K: +0.817 tau-b, +0.800 stable sort)."""


@dataclass(frozen=True)
class AnchorPair:
    """Two anchors, the models their rankings were compared on, and Kendall's tau-b.

    ``tau`` is None where it is undefined: fewer than two models compared, or a ranking
    that is constant on them.
    """

    a: str
    b: str
    compared: tuple[str, ...]
    tau: float | None


@dataclass(frozen=True)
class AnchorAgreement:
    """Kendall's tau between the composition-gap rankings under every two anchors.

    ``rankings[anchor][model]`` is the model's composition-gap count on the anchor's screen,
    ``screened[anchor]`` how many families that screen keeps; ``mean`` averages the defined
    pair taus (None when there is none).
    """

    rule: AnchorRule
    ties: TieRule
    pairs: tuple[AnchorPair, ...]
    screened: dict[str, int]
    rankings: dict[str, dict[str, float]]

    @property
    def mean(self) -> float | None:
        defined = [p.tau for p in self.pairs if p.tau is not None]
        return sum(defined) / len(defined) if defined else None


def composition_ranking(
    runs: Mapping[str, Sequence[FamilyCounts]], pids: set[str], tau: int = 1
) -> dict[str, float]:
    """Composition-gap count of every model on the families ``pids``."""
    return {
        model: float(sum(gap(f, tau) is Gap.COMPOSITION for f in fams if f.pid in pids))
        for model, fams in runs.items()
    }


def _pair_tau(a: dict[str, float], b: dict[str, float], ties: TieRule) -> float | None:
    if ties is TieRule.STABLE_SORT:
        a, b = stable_ranks(a), stable_ranks(b)
    try:
        return kendall_tau(a, b)
    except ValueError:
        return None


def anchor_agreement(
    runs: Mapping[str, Sequence[FamilyCounts]],
    tau: int = 1,
    rule: AnchorRule = AnchorRule.OTHERS,
    ties: TieRule = TieRule.TAU_B,
) -> AnchorAgreement | None:
    """Each model in turn as anchor: screen the families common to all models (the anchor
    fails them directly and passes their milestone test), rank every model by composition-gap
    count on them; tau between the rankings of every two anchors, on the models ``rule``
    names, ties ranked by ``ties`` (under ``stable-sort``, in the order of ``runs``). None
    with fewer than two models."""
    if len(runs) < 2:
        return None
    common = set.intersection(*({f.pid for f in fams} for fams in runs.values()))
    screened = {
        anchor: {f.pid for f in fams if f.pid in common and passes_anchor_screen(f)}
        for anchor, fams in runs.items()
    }
    rankings = {a: composition_ranking(runs, pids, tau) for a, pids in screened.items()}
    pairs = []
    for a, b in itertools.combinations(sorted(runs), 2):
        compared = tuple(m for m in runs if rule is AnchorRule.ALL or m not in (a, b))
        value = _pair_tau(
            {m: rankings[a][m] for m in compared}, {m: rankings[b][m] for m in compared}, ties
        )
        pairs.append(AnchorPair(a, b, tuple(sorted(compared)), value))
    screened_counts = {a: len(p) for a, p in screened.items()}
    return AnchorAgreement(rule, ties, tuple(pairs), screened_counts, rankings)
