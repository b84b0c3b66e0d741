"""Bootstrap intervals, ranking stability and Kendall's tau against known values."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import kendalltau

from gapscope.stats.rank import kendall_tau, stable_ranks
from gapscope.stats.resampling import (
    BootstrapScheme,
    bootstrap_ci,
    default_resamples,
    ranking_stability,
    scheme_rng,
)


def test_bootstrap_of_a_constant_is_degenerate() -> None:
    ci = bootstrap_ci([1.0] * 20, n_resamples=200, rng=np.random.default_rng(0))
    assert (ci.estimate, ci.low, ci.high) == (20.0, 20.0, 20.0)


def test_bootstrap_interval_of_a_proportion_matches_the_normal_approximation() -> None:
    values = [1.0] * 60 + [0.0] * 40  # any-probe share 0.6 over 100 families
    ci = bootstrap_ci(
        values, statistic=lambda v: float(v.mean()), n_resamples=4000, rng=np.random.default_rng(1)
    )
    half = 1.96 * (0.6 * 0.4 / 100) ** 0.5  # 0.096
    assert ci.estimate == pytest.approx(0.6)
    assert ci.low == pytest.approx(0.6 - half, abs=0.015)
    assert ci.high == pytest.approx(0.6 + half, abs=0.015)


def test_bootstrap_rejects_bad_arguments() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="at least one family"):
        bootstrap_ci([], rng=rng)
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_ci([1.0], confidence=1.5, rng=rng)


def test_ranking_stability_dominance_and_coin_flip() -> None:
    rng = np.random.default_rng(2)
    strong = [1.0] * 50
    weak = [0.0] * 50
    result = {(s.a, s.b): s for s in ranking_stability({"strong": strong, "weak": weak}, rng=rng)}
    assert result[("strong", "weak")].a_beats_b == 1.0
    assert result[("weak", "strong")].a_beats_b == 0.0
    # identical models tie in every resample
    same = ranking_stability({"a": strong, "b": strong}, n_resamples=100, rng=rng)
    assert all(s.ties == 1.0 and s.a_beats_b == 0.0 for s in same)
    with pytest.raises(ValueError, match="not aligned"):
        ranking_stability({"a": [1.0], "b": [1.0, 0.0]}, rng=rng)


def test_paired_resampling_sees_a_one_family_difference() -> None:
    # B equals A except on one family where A wins: A never loses on a paired resample
    a = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0]
    b = [0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0]
    pairs = {
        (s.a, s.b): s for s in ranking_stability({"a": a, "b": b}, rng=np.random.default_rng(3))
    }
    share = pairs[("a", "b")].a_beats_b
    assert pairs[("a", "b")].a_beats_b + pairs[("a", "b")].ties == pytest.approx(1.0)
    assert share == pytest.approx(1 - (7 / 8) ** 8, abs=0.02)  # P(family 0 drawn at least once)


def test_kendall_known_values() -> None:
    a = {"m1": 1, "m2": 2, "m3": 3, "m4": 4}
    assert kendall_tau(a, a) == 1.0
    assert kendall_tau(a, {k: -v for k, v in a.items()}) == -1.0
    # one swapped adjacent pair among 6 pairs: (5 - 1) / 6
    assert kendall_tau(a, {"m1": 1, "m2": 3, "m3": 2, "m4": 4}) == pytest.approx(4 / 6)
    with pytest.raises(ValueError, match="constant"):
        kendall_tau(a, dict.fromkeys(a, 1.0))
    with pytest.raises(ValueError, match="two common models"):
        kendall_tau({"x": 1.0}, {"x": 2.0})


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=3, max_size=12).filter(
        lambda rows: len({r[0] for r in rows}) > 1 and len({r[1] for r in rows}) > 1
    )
)
def test_kendall_matches_scipy_tau_b_with_ties(rows: list[tuple[int, int]]) -> None:
    a = {f"m{i}": float(x) for i, (x, _) in enumerate(rows)}
    b = {f"m{i}": float(y) for i, (_, y) in enumerate(rows)}
    expected = kendalltau([x for x, _ in rows], [y for _, y in rows]).statistic
    assert kendall_tau(a, b) == pytest.approx(expected)


def test_stable_ranks_break_ties_in_the_given_order() -> None:
    assert stable_ranks({"a": 3.0, "b": 5.0, "c": 3.0, "d": 1.0}) == {
        "b": 1.0,
        "a": 2.0,
        "c": 3.0,
        "d": 4.0,
    }
    assert stable_ranks({"c": 3.0, "a": 3.0}) == {"c": 1.0, "a": 2.0}


def test_the_authors_scheme_draws_what_their_script_draws() -> None:
    """bootstrap_fingerprint_cis.py: np.random.seed(42), then one np.random.randint(0, n,
    size=n) per resample; row beats column when strictly greater."""
    strong = [1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0]
    weak = [1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0]
    saved = np.random.get_state()
    try:
        np.random.seed(42)
        wins = 0
        for _ in range(50):
            idx = np.random.randint(0, len(strong), size=len(strong))
            wins += sum(strong[i] for i in idx) > sum(weak[i] for i in idx)
    finally:
        np.random.set_state(saved)
    rng = scheme_rng(BootstrapScheme.AUTHORS, seed=7)  # their seed, whatever ours is
    pairs = ranking_stability({"s": strong, "w": weak}, n_resamples=50, rng=rng)
    assert pairs[0].a_beats_b == wins / 50
    assert default_resamples(BootstrapScheme.AUTHORS) == 1000
    assert default_resamples(BootstrapScheme.GAPSCOPE) == 2000
