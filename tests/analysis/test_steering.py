"""Steered runs regrouped into dosage curves from their logs' own records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gapscope.analysis.diagnostics import DIAGNOSTICS, LoadedLog
from gapscope.analysis.logs import RunInfo
from gapscope.analysis.s2b import S2BRunSummary
from gapscope.analysis.steering import dosage_curves, is_steering_run, steering_of

SETTINGS = {"preset": "demo", "seeds": 2, "first_seed": 0, "listener": "lm", "max_tokens": 8}


def _run(
    name: str,
    zsct: tuple[float, float],
    *,
    alpha: float = 0.0,
    kind: str | None = None,
    base: str = "b1",
    model: str = "m",
    extra: dict[str, Any] | None = None,
) -> LoadedLog:
    steer = None if kind is None else f"/dirs/{base}/{kind}"
    record = None if kind is None else {"kind": kind, "fingerprint": f"{base}-{kind}", "base": base}
    info = RunInfo(
        task="s2b_lm",
        model=model,
        task_args={**SETTINGS, **(extra or {}), "steer": steer, "alpha": alpha},
        metadata={"steering": record},
        status="success",
        location=name,
        started_at=None,
        completed_at=None,
    )
    per_seed = [{"seed": s, "zsct": z, "unparsed": 1} for s, z in enumerate(zsct)]
    query = {f"seed-{s}/game-{g}": g < z / 10 for s, z in enumerate(zsct) for g in range(10)}
    summary = S2BRunSummary("demo", "lm", model, name, "success", per_seed, {}, query)
    return LoadedLog(Path(name), DIAGNOSTICS["s2b_lm"], summary, info)


def test_runs_group_by_base_direction_and_share_the_unsteered_baseline() -> None:
    logs = [
        _run("base.eval", (50.0, 60.0)),
        _run("clb-2.eval", (30.0, 40.0), alpha=-2, kind="clb"),
        _run("clb+1.eval", (60.0, 70.0), alpha=1, kind="clb"),
        _run("orth-2.eval", (50.0, 60.0), alpha=-2, kind="orthogonal"),
        _run("other.eval", (10.0, 20.0), alpha=-2, kind="clb", base="b2"),
    ]
    notes: list[str] = []
    first, second = dosage_curves(logs, notes)
    cells = [(p.direction, p.alpha, p.mean) for p in first.points]
    assert cells == [
        ("baseline", 0.0, 55.0),
        ("clb", -2.0, 35.0),
        ("clb", 1.0, 65.0),
        ("orthogonal", -2.0, 55.0),
    ]
    assert first.points[0].incoherent == pytest.approx(2 / 20)  # 1 unparsed per 10 queries
    clb = first.trends[0]
    assert clb.direction == "clb" and clb.rho is not None and clb.rho > 0.8
    assert (second.base, [p.direction for p in second.points]) == ("b2", ["baseline", "clb"])
    assert first.setting == SETTINGS and not notes
    assert [is_steering_run(x) for x in logs] == [False, True, True, True, True]


def test_a_curve_without_matching_baseline_says_so() -> None:
    logs = [
        _run("base.eval", (50.0, 60.0), extra={"max_tokens": 99}),  # other settings
        _run("clb.eval", (30.0, 40.0), alpha=-2, kind="clb"),
        _run("again.eval", (20.0, 40.0), alpha=-2, kind="clb"),
    ]
    (curve,) = dosage_curves(logs, [])
    assert [(p.direction, p.mean) for p in curve.points] == [("clb", 30.0)]
    assert any("no alpha = 0 point" in note for note in curve.notes)
    assert any("two runs, again.eval is used" in note for note in curve.notes)


def test_alpha_zero_is_unsteered_and_old_logs_fall_back_to_the_directory() -> None:
    assert steering_of(_run("a.eval", (1.0, 2.0), alpha=0.0, kind="clb").info) is None
    old = _run("old.eval", (1.0, 2.0), alpha=3.0, kind="random")
    assert old.info is not None
    old.info.metadata.clear()  # a log from before runs recorded provenance
    steering = steering_of(old.info)
    assert steering is not None
    assert (steering.kind, steering.base, steering.alpha) == ("random", "/dirs/b1", 3.0)
