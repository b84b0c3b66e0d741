"""Dosage statistics and the figure: numbers a user reads off the curve."""

from __future__ import annotations

from pathlib import Path

import pytest
from scipy import stats as scipy_stats

from gapscope.analysis.figures import dosage_figure, save_figure
from gapscope.analysis.steering import DosageCurve
from gapscope.steer.dosage import BASELINE, DoseCondition, curve_points, trend

SEEDS = ("0", "1", "2", "3")


def _grid() -> list[DoseCondition]:
    """CLB: ZSCT rises 10 points per unit alpha (plus seed noise); control: flat noise."""
    noise = {"0": -2.0, "1": 1.0, "2": 0.5, "3": 1.5}
    conditions = [DoseCondition(BASELINE, 0.0, {s: 80 + noise[s] for s in SEEDS}, 0.0)]
    for alpha in (-4.0, -2.0, 1.0):
        clb = {s: 80 + 10 * alpha + noise[s] for s in SEEDS}
        flat = {s: 80 + noise[s] * (1 if alpha > -3 else -1) for s in SEEDS}
        conditions.append(DoseCondition("clb", alpha, clb, 0.05, {"adj_zsct": 0.0}))
        conditions.append(DoseCondition("random", alpha, flat, 0.0))
    return conditions


def test_monotone_direction_has_rho_near_one_and_a_slope_ci_above_zero() -> None:
    result = trend("clb", _grid(), n_resamples=500)
    assert result.rho is not None and result.rho > 0.95
    assert result.slope == pytest.approx(10.0, abs=0.01)
    assert 9.0 < result.slope_low <= result.slope <= result.slope_high < 11.0
    assert result.points == 16  # 4 alphas (baseline included) x 4 seeds


def test_flat_control_has_a_slope_ci_around_zero() -> None:
    result = trend("random", _grid(), n_resamples=500)
    assert result.rho is not None and abs(result.rho) < 0.5
    assert result.slope_low < 0 < result.slope_high


def test_constant_curve_reports_no_rho() -> None:
    conditions = [
        DoseCondition(BASELINE, 0.0, {"0": 50.0}, 0.0),
        DoseCondition("x", 1.0, {"0": 50.0}, 0),
    ]
    assert trend("x", conditions, n_resamples=10).rho is None


def test_curve_points_summarize_each_condition() -> None:
    points = curve_points(_grid(), n_resamples=500)
    base = points[0]
    assert (base.direction, base.alpha, base.n) == (BASELINE, 0.0, 4)
    assert base.mean == pytest.approx(80.25)
    assert base.ci_low <= base.mean <= base.ci_high
    assert points[1].incoherent == 0.05 and points[1].extra == {"adj_zsct": 0.0}


def test_figure_draws_every_direction_and_is_written_as_png_and_svg(tmp_path: Path) -> None:
    points = curve_points(_grid(), n_resamples=50)
    curve = DosageCurve("S2B-LM", "m", {"preset": "p"}, "abc", "zsct", points, [], {})
    named = dosage_figure(curve)
    top, bottom = named.figure.axes
    assert {t.get_text() for t in top.get_legend().get_texts()} == {"clb", "random", "chance"}
    clb_x, random_x = (sorted(x for x, _ in c.lines[0].get_xydata()) for c in top.containers)
    assert clb_x == pytest.approx([-4.0, -2.0, 0.0, 1.0], abs=0.2)  # baseline in every curve
    assert all(a < b for a, b in zip(clb_x, random_x, strict=True))  # dodged, never hidden
    assert len(bottom.patches) == 8  # incoherent bars: 4 alphas x 2 directions
    png, svg = save_figure(named, tmp_path)
    assert (png.name, svg.name) == ("dosage.png", "dosage.svg")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = svg.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text


def test_weighted_units_give_the_pooled_rate_and_the_drop_against_baseline() -> None:
    attempts = {"p1": 30.0, "p2": 10.0}
    conditions = [
        DoseCondition(BASELINE, 0.0, {"p1": 0.5, "p2": 0.1}, 0.0, weights=attempts),
        DoseCondition("clb", -3.0, {"p1": 0.05, "p2": 0.0}, 0.0, weights=attempts),
    ]
    base, clb = curve_points(conditions, n_resamples=200)
    assert base.mean == pytest.approx(16 / 40)  # (15 + 1) correct of 40 attempts
    assert clb.mean == pytest.approx(1.5 / 40)
    assert clb.relative_drop == pytest.approx(1 - 1.5 / 16)
    assert base.ci_low is not None and base.ci_high is not None
    assert 0.1 <= base.ci_low <= base.mean <= base.ci_high <= 0.5  # resampled problem-wise


def test_a_curve_point_over_one_unit_has_no_interval() -> None:
    (point,) = curve_points([DoseCondition(BASELINE, 0.0, {"seed-0": 80.0}, 0.0)])
    assert point.mean == 80.0 and (point.ci_low, point.ci_high) == (None, None)


def test_resamples_at_a_single_alpha_are_dropped_not_counted_as_flat() -> None:
    # unit "a" was only run unsteered, unit "b" only at alpha 1: a resample of a alone or of b
    # alone has no slope; only the resamples holding both see the rise of 10
    conditions = [
        DoseCondition(BASELINE, 0.0, {"a": 50.0}, 0.0),
        DoseCondition("clb", 1.0, {"b": 60.0}, 0.0),
    ]
    result = trend("clb", conditions, n_resamples=1000, seed=1)
    assert result.slope == pytest.approx(scipy_stats.linregress([0.0, 1.0], [50.0, 60.0]).slope)
    assert result.resamples == 1000
    assert 400 < result.dropped < 600  # P(both draws the same unit) = 1/2
    assert (result.slope_low, result.slope_high) == (pytest.approx(10.0), pytest.approx(10.0))


def test_slope_and_its_interval_are_absent_when_undefined() -> None:
    one_unit = [
        DoseCondition(BASELINE, 0.0, {"a": 50.0}, 0.0),
        DoseCondition("clb", 1.0, {"a": 60.0}, 0.0),
    ]
    result = trend("clb", one_unit, n_resamples=100)
    assert result.slope == pytest.approx(10.0)
    assert (result.slope_low, result.slope_high) == (None, None)  # one unit: no CI
    one_alpha = [DoseCondition("clb", 1.0, {"a": 60.0, "b": 70.0}, 0.0)]
    flat = trend("clb", one_alpha, n_resamples=100)
    assert flat.slope is None and flat.slope_low is None and flat.dropped == 100
