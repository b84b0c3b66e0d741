"""Statistical checks behind gapscope's claims.

Currently the median-split quadrant test (a one-sided Fisher exact test computed by exact
enumeration), used to argue that a capability is *necessary* for a performance level.  The
typer sub-app lives in :mod:`gapscope.app.stats` and is not imported here, so the statistics
stay importable without the CLI stack.
"""

from gapscope.stats.quadrant import (
    ENUMERATION_LIMIT,
    QuadrantResult,
    exact_p_value,
    hypergeom_p_value,
    median_split,
    quadrant_test,
)

__all__ = [
    "ENUMERATION_LIMIT",
    "QuadrantResult",
    "exact_p_value",
    "hypergeom_p_value",
    "median_split",
    "quadrant_test",
]
