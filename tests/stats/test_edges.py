"""Edge cases where a statistic is undefined: it says so (None, a ValueError), it does not
return a number that looks like evidence. Checked against scipy where scipy has the answer
(the dosage curve's own edges are in tests/steer/test_dosage.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from gapscope.stats.paired import holm
from gapscope.stats.rank import kendall_tau
from gapscope.stats.resampling import bootstrap_ci


def test_a_bootstrap_over_one_unit_has_an_estimate_and_no_interval() -> None:
    alone = bootstrap_ci([0.7], rng=np.random.default_rng(0))
    assert (alone.estimate, alone.low, alone.high, alone.interval) == (0.7, None, None, None)
    pair = bootstrap_ci([0.7, 0.1], rng=np.random.default_rng(0))
    assert pair.interval is not None and pair.interval[0] < pair.interval[1]


def test_holm_refuses_nan() -> None:
    with pytest.raises(ValueError, match=r"p_values\[1\] is NaN"):
        holm([0.01, math.nan, 0.04])
    with pytest.raises(ValueError, match="not a probability"):
        holm([0.01, 1.5])
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])


def test_kendall_tau_refuses_nan() -> None:
    a = {"m1": 1.0, "m2": 2.0, "m3": 3.0}
    b = {"m1": 1.0, "m2": math.nan, "m3": 3.0}
    assert math.isnan(scipy_stats.kendalltau([1, 2, 3], [1, math.nan, 3]).statistic)
    with pytest.raises(ValueError, match=r"b\['m2'\] is NaN"):
        kendall_tau(a, b)
