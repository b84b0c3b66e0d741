"""Statistical checks behind gapscope's claims.

Currently the median-split quadrant test (a one-sided Fisher exact test computed by exact
enumeration), used to argue that a capability is *necessary* for a performance level.  The
typer sub-app lives in :mod:`gapscope.app.stats` and is not imported here, so the statistics
stay importable without the CLI stack.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gapscope._face import lazy_face

if TYPE_CHECKING:
    from gapscope.stats.agreement import cohen_kappa
    from gapscope.stats.groups import GroupTest, kruskal_wallis, one_way_anova
    from gapscope.stats.paired import (
        DifferenceCI,
        McNemarResult,
        holm,
        mcnemar_exact,
        paired_bootstrap_difference,
    )
    from gapscope.stats.passk import mean_pass_at_k, pass_at_k
    from gapscope.stats.proportion import wilson_percent
    from gapscope.stats.quadrant import (
        ENUMERATION_LIMIT,
        QuadrantResult,
        exact_p_value,
        hypergeom_p_value,
        median_split,
        quadrant_test,
    )
    from gapscope.stats.rank import kendall_tau, stable_ranks
    from gapscope.stats.resampling import (
        BootstrapCI,
        BootstrapScheme,
        PairwiseStability,
        Rng,
        bootstrap_ci,
        default_resamples,
        ranking_stability,
        scheme_rng,
    )

__all__ = [
    "ENUMERATION_LIMIT",
    "BootstrapCI",
    "BootstrapScheme",
    "DifferenceCI",
    "GroupTest",
    "McNemarResult",
    "PairwiseStability",
    "QuadrantResult",
    "Rng",
    "bootstrap_ci",
    "cohen_kappa",
    "default_resamples",
    "exact_p_value",
    "holm",
    "hypergeom_p_value",
    "kendall_tau",
    "kruskal_wallis",
    "mcnemar_exact",
    "mean_pass_at_k",
    "median_split",
    "one_way_anova",
    "paired_bootstrap_difference",
    "pass_at_k",
    "quadrant_test",
    "ranking_stability",
    "scheme_rng",
    "stable_ranks",
    "wilson_percent",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "BootstrapCI": ".resampling",
        "BootstrapScheme": ".resampling",
        "DifferenceCI": ".paired",
        "ENUMERATION_LIMIT": ".quadrant",
        "GroupTest": ".groups",
        "McNemarResult": ".paired",
        "PairwiseStability": ".resampling",
        "QuadrantResult": ".quadrant",
        "Rng": ".resampling",
        "bootstrap_ci": ".resampling",
        "cohen_kappa": ".agreement",
        "default_resamples": ".resampling",
        "exact_p_value": ".quadrant",
        "holm": ".paired",
        "hypergeom_p_value": ".quadrant",
        "kendall_tau": ".rank",
        "kruskal_wallis": ".groups",
        "mcnemar_exact": ".paired",
        "mean_pass_at_k": ".passk",
        "median_split": ".quadrant",
        "one_way_anova": ".groups",
        "paired_bootstrap_difference": ".paired",
        "pass_at_k": ".passk",
        "quadrant_test": ".quadrant",
        "ranking_stability": ".resampling",
        "scheme_rng": ".resampling",
        "stable_ranks": ".rank",
        "wilson_percent": ".proportion",
    },
)
