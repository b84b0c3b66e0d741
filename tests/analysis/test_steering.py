"""Steered runs regrouped into dosage curves from their logs' own records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gapscope.analysis.diagnostics import LoadedLog
from gapscope.analysis.logs import RunInfo
from gapscope.analysis.prove import ProblemCounts, ProveRun, summarize
from gapscope.analysis.s2b import S2BRunSummary
from gapscope.analysis.steering import SOLVE_RATE, dosage_curves, is_steering_run, steering_of
from gapscope.analysis.table import reader, steering_target
from gapscope.prove.coherence import Coherence

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
    return LoadedLog(Path(name), reader("s2b_lm"), summary, info)


def test_runs_group_by_base_direction_and_share_the_unsteered_baseline() -> None:
    logs = [
        _run("base.eval", (50.0, 60.0)),
        _run("clb-2.eval", (30.0, 40.0), alpha=-2, kind="clb"),
        _run("clb+1.eval", (60.0, 70.0), alpha=1, kind="clb"),
        _run("orth-2.eval", (50.0, 60.0), alpha=-2, kind="orthogonal"),
        _run("other.eval", (10.0, 20.0), alpha=-2, kind="clb", base="b2"),
    ]
    notes: list[str] = []
    first, second = dosage_curves(logs, notes, steering_target)
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
    (curve,) = dosage_curves(logs, [], steering_target)
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


def _prove_run(
    name: str, proven: list[int], *, alpha: float = 0.0, kind: str | None = None, attempts: int = 32
) -> LoadedLog:
    """A miniF2F transfer run: ``proven[i]`` of ``attempts`` attempts proved problem i."""
    steer = None if kind is None else f"/dirs/b1/{kind}"
    record = None if kind is None else {"kind": kind, "fingerprint": f"b1-{kind}", "base": "b1"}
    problems = [
        ProblemCounts(
            f"aime_{i}",
            {
                c: {Coherence.PROVEN: won, Coherence.UNPROVEN: attempts - won}.get(c, 0)
                for c in Coherence
            },
        )
        for i, won in enumerate(proven)
    ]
    summary = summarize(ProveRun("m", name, "success", (1, 32), problems))
    info = RunInfo(
        task="prove",
        model="m",
        task_args={"subset": "aime", "n": attempts, "steer": steer, "alpha": alpha},
        metadata={"steering": record},
        status="success",
        location=name,
        started_at=None,
        completed_at=None,
    )
    return LoadedLog(Path(name), reader("prove"), summary, info)


def _spread(total: int, problems: int = 15) -> list[int]:
    """``total`` correct attempts spread over the problems as evenly as possible."""
    return [total // problems + (i < total % problems) for i in range(problems)]


def test_transfer_reads_the_per_attempt_solve_rate_on_the_seeds_scale() -> None:
    # the seed's Figure 7: 155, 14, 153 and 114 of 480 attempts (15 problems x 32)
    logs = [
        _prove_run("base.eval", _spread(155)),
        _prove_run("clb-3.eval", _spread(14), alpha=-3, kind="clb"),
        _prove_run("clb+1.eval", _spread(114), alpha=1, kind="clb"),
        _prove_run("random-3.eval", _spread(153), alpha=-3, kind="random"),
    ]
    (curve,) = dosage_curves(logs, [], steering_target)
    assert curve.metric == SOLVE_RATE == curve.to_dict()["metric"]
    points = {(p.direction, p.alpha): p for p in curve.points}
    base, suppressed = points[("baseline", 0.0)], points[("clb", -3.0)]
    shown = [f"{100 * points[cell].mean:.1f}" for cell in points]
    assert shown == ["32.3", "2.9", "23.8", "31.9"]  # the seed's numbers, to its precision
    assert suppressed.relative_drop == pytest.approx(1 - 14 / 155)  # "91 % relative drop"
    assert f"{100 * (1 - suppressed.mean / base.mean):.0f}" == "91"
    assert base.relative_drop == 0.0
    assert base.ci_low is not None and base.ci_high is not None
    assert base.ci_low < base.mean < base.ci_high
    assert base.n == 15 and base.extra["attempts"] == 480 and base.extra["correct"] == 155
    assert base.extra["pass@32"] == 1.0  # every problem proved at least once: pass@32 is flat
    assert base.per_unit["aime_0"]["attempts"] == 32 and base.per_unit["aime_0"]["correct"] == 11
    assert base.per_unit["aime_0"]["pass@1"] == pytest.approx(11 / 32)


def test_solve_rate_pools_attempts_where_problems_have_unequal_counts() -> None:
    uneven = _prove_run("base.eval", [1, 0], attempts=32)
    problems = [
        ProblemCounts("aime_0", {c: {Coherence.PROVEN: 1}.get(c, 0) for c in Coherence}),
        ProblemCounts("aime_1", {c: {Coherence.UNPROVEN: 9}.get(c, 0) for c in Coherence}),
    ]
    summary = summarize(ProveRun("m", "base.eval", "success", (1,), problems))
    loaded = LoadedLog(uneven.path, uneven.diagnostic, summary, uneven.info)
    steered = _prove_run("clb.eval", [0, 0], alpha=-3, kind="clb")
    (curve,) = dosage_curves([loaded, steered], [], steering_target)
    assert curve.points[0].mean == pytest.approx(1 / 10)  # 1 of 10 attempts, not (1 + 0) / 2


def test_a_point_evaluated_on_the_extraction_episodes_is_flagged() -> None:
    config = {"n_dim": 2, "query_size": 4}
    extraction = {"preset": "demo", "seeds": [1, 1000], "config": config}
    logs = [
        _run("base.eval", (50.0, 60.0)),
        _run("clb.eval", (30.0, 40.0), alpha=-2, kind="clb"),
    ]
    for loaded in logs:
        assert loaded.info is not None
        loaded.info.metadata["config"] = config
    steered = logs[1].info
    assert steered is not None
    steered.metadata["steering"]["extraction"] = extraction
    (curve,) = dosage_curves(logs, [], steering_target)
    assert [p.overlaps_extraction for p in curve.points] == [True, True]  # seed 1 in both
    assert curve.to_dict()["points"][1]["overlaps_extraction"] is True
    assert any("episode seeds 1, which the direction was extracted" in n for n in curve.notes)

    # the same seeds under another episode configuration are other episodes
    steered.metadata["steering"]["extraction"] = {**extraction, "config": {"n_dim": 3}}
    (held_out,) = dosage_curves(logs, [], steering_target)
    assert not any(p.overlaps_extraction for p in held_out.points) and not held_out.notes
