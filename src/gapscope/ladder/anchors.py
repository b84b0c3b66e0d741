"""The anchor screen and how much the composition-gap ranking depends on the anchor.

The paper's diagnostic set is screened by one anchor student (Qwen3-8B-Base): a family stays
when the anchor fails the parent in every direct attempt and solves every tested milestone
alone at least once, and when it has at least two tested milestones (seed Appendix B: 1,024
compiled -> 731 screened -> 354). Category shares therefore depend on the anchor. The paper
checks this by re-screening with each panel model as anchor and comparing the models'
composition-gap rankings between every two anchors with Kendall's tau (6 models: 15 anchor
pairs, mean +0.80 with the 16K milestone test, +0.62 with the 4K one). Both are pure
functions of per-family counts, so they run on our logs and on the authors' released panel.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gapscope.ladder.taxonomy import FamilyCounts, Gap, gap, passes_stage0
from gapscope.stats.rank import kendall_tau

MIN_TESTED_MILESTONES = 2
"""The paper's last screen: at least two tested (non-INTEGRATE) milestones."""


def passes_anchor_screen(counts: FamilyCounts) -> bool:
    """The anchor fails the parent in every direct attempt and passes the milestone test."""
    return counts.c1 == 0 and passes_stage0(counts)


@dataclass(frozen=True)
class ScreenFunnel:
    """How many families survive each screen, and the pids kept (in input order)."""

    compiled: int
    anchor_fails_parent: int
    anchor_passes_milestones: int
    enough_milestones: int
    kept: tuple[str, ...]

    def counts(self) -> dict[str, int]:
        return {
            "compiled": self.compiled,
            "anchor_fails_parent": self.anchor_fails_parent,
            "anchor_passes_milestone_test": self.anchor_passes_milestones,
            f"at_least_{MIN_TESTED_MILESTONES}_tested_milestones": self.enough_milestones,
            "kept": len(self.kept),
        }


def screen(anchor: Sequence[FamilyCounts]) -> ScreenFunnel:
    """The paper's screen over the anchor's counts on compiled families.

    ``anchor`` needs C1 and Stage 0 counts of every family (a run with ``--conditions C1,S0``).
    """
    fails = [f for f in anchor if f.c1 == 0]
    solvable = [f for f in fails if passes_stage0(f)]
    kept = [f for f in solvable if len(f.milestones) >= MIN_TESTED_MILESTONES]
    return ScreenFunnel(
        compiled=len(anchor),
        anchor_fails_parent=len(fails),
        anchor_passes_milestones=len(solvable),
        enough_milestones=len(kept),
        kept=tuple(f.pid for f in kept),
    )


@dataclass(frozen=True)
class AnchorAgreement:
    """Kendall's tau between the composition-gap rankings under every two anchors.

    ``pairs`` maps (anchor a, anchor b) to tau, None where a ranking is constant (tau is
    undefined); ``mean`` averages the defined ones (None when there is none).
    """

    pairs: dict[tuple[str, str], float | None]
    screened: dict[str, int]

    @property
    def mean(self) -> float | None:
        defined = [t for t in self.pairs.values() if t is not None]
        return sum(defined) / len(defined) if defined else None


def composition_ranking(
    runs: Mapping[str, Sequence[FamilyCounts]], pids: set[str], tau: int = 1
) -> dict[str, float]:
    """Composition-gap count of every model on the families ``pids``."""
    return {
        model: float(sum(gap(f, tau) is Gap.COMPOSITION for f in fams if f.pid in pids))
        for model, fams in runs.items()
    }


def anchor_agreement(
    runs: Mapping[str, Sequence[FamilyCounts]], tau: int = 1
) -> AnchorAgreement | None:
    """Each model in turn as anchor: screen its families, rank every model by composition-gap
    count on them; tau between the rankings of every two anchors. None with < 2 models."""
    if len(runs) < 2:
        return None
    common = set.intersection(*({f.pid for f in fams} for fams in runs.values()))
    screened = {
        anchor: {f.pid for f in fams if f.pid in common and passes_anchor_screen(f)}
        for anchor, fams in runs.items()
    }
    rankings = {a: composition_ranking(runs, pids, tau) for a, pids in screened.items()}
    pairs: dict[tuple[str, str], float | None] = {}
    for a, b in itertools.combinations(sorted(runs), 2):
        try:
            pairs[(a, b)] = kendall_tau(rankings[a], rankings[b])
        except ValueError:
            pairs[(a, b)] = None
    return AnchorAgreement(pairs, {a: len(p) for a, p in screened.items()})
