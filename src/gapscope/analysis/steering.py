"""Steered runs -> dosage curves (seed, Figure 5), read from Inspect logs like every result.

A steered log is a run of a steering target's task (a spec's
:class:`~gapscope.analysis.spec.SteeringTarget`: S2B-LM, prove, or any diagnostic that declares
one) with ``steer``/``alpha``; its metadata carries the
direction's provenance (:func:`gapscope.models.task_steering.check_options`): kind (``clb`` or a
control), fingerprint, and ``base``, the CLB direction it belongs to. Steered logs that share
diagnostic, model, settings (the task arguments apart from ``steer``/``alpha``) and base form
one curve; the unsteered run with the same diagnostic, model and settings is its alpha = 0
baseline. ``gapscope run steer`` writes exactly such logs, but runs from several sweeps, or
made by hand with ``--steer``, are grouped the same way, so the report needs no sweep file.

Steered runs are interventions, not the model: the report keeps them (and a sweep's own
baseline run) out of the gap profile and the pairwise comparisons and shows them here.

Metrics: each target's ``condition`` reads a run into a point. S2B-LM points are ZSCT per
episode. Prove points are the per-attempt solve rate
(correct attempts / checked attempts, pooled over problems, its CI clustered by problem), the
scale of the seed's 32.3 % / 2.9 % (155 and 14 of 480); pass@k per problem and overall stand
beside it. A right-or-wrong diagnostic's points are its share correct over samples
(:func:`gapscope.analysis.share.share_condition`). A point whose run evaluated episodes the
direction was extracted from carries ``overlaps_extraction`` and a note: it is not a held-out
measurement.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from gapscope.analysis.profile import GapRow
from gapscope.analysis.prove import ProveSummary
from gapscope.analysis.s2b import S2BRunSummary
from gapscope.prove import Coherence
from gapscope.s2b import adj_zsct
from gapscope.stats import pass_at_k
from gapscope.steer import (
    BASELINE,
    CurvePoint,
    DoseCondition,
    Extraction,
    Trend,
    curve_points,
    seed_overlap,
    trend,
)

if TYPE_CHECKING:
    from gapscope.analysis.logs import RunInfo
    from gapscope.analysis.spec import LoadedLog, SteeringTarget

STEERING_ARGS = ("steer", "alpha")
SOLVE_RATE = "per-attempt solve rate"
"""The transfer's metric: correct attempts / checked attempts (seed: 32.3 % = 155 / 480)."""

TargetOf = Callable[[str], "SteeringTarget | None"]
"""The steering target whose runs are of a task (``table.steering_target``): passed in, as
the table names this module's point readers."""


@dataclass(frozen=True)
class Steering:
    """How one run was steered: the direction's kind and fingerprint, its base CLB, alpha."""

    kind: str
    fingerprint: str
    base: str
    alpha: float


def steering_of(info: RunInfo | None) -> Steering | None:
    """The steering of a run; None when nothing was steered (no direction, or alpha = 0,
    which installs no hook: that run is the unsteered model)."""
    if info is None:
        return None
    alpha = float(info.task_args.get("alpha") or 0.0)
    steer = info.task_args.get("steer")
    if steer is None or alpha == 0:
        return None
    record = info.metadata.get("steering")
    if not record:  # a log written before runs recorded provenance: the directory names it
        directory = Path(str(steer))
        return Steering(directory.name, str(directory), str(directory.parent), alpha)
    return Steering(str(record["kind"]), str(record["fingerprint"]), str(record["base"]), alpha)


SWEEP_KEY = "steering_sweep"
"""Set by ``gapscope run steer`` on every run of a sweep (see :mod:`gapscope.app.sweep`)."""


def is_steering_run(loaded: LoadedLog) -> bool:
    """A steered run, or the unsteered baseline a sweep ran for its curve: both are read as
    dosage-curve points, not as the model's own results."""
    return steering_of(loaded.info) is not None or _sweep_of(loaded) is not None


def s2b_condition(direction: str, alpha: float, summary: S2BRunSummary) -> DoseCondition:
    """Per-seed ZSCT; incoherent = share of query games whose answer did not parse."""
    rows = [row for row in summary.per_seed if "error" not in row]
    if not rows:
        raise ValueError(f"{direction} alpha={alpha:g}: no episode was scored")
    zsct = {str(row["seed"]): float(row["zsct"]) for row in rows}
    queries = len(summary.query)
    unparsed = sum(row["unparsed"] for row in rows)
    return DoseCondition(
        direction,
        alpha,
        zsct,
        incoherent=unparsed / queries if queries else 0.0,
        extra={"adj_zsct": adj_zsct(sum(zsct.values()) / len(zsct))},
    )


def prove_condition(direction: str, alpha: float, summary: ProveSummary) -> DoseCondition:
    """Per-problem solve rate c / n, weighted by n, so the point is the per-attempt solve rate;
    per problem its attempts, correct attempts and pass@k for every k it has attempts for,
    overall pass@k in ``extra``; incoherent = parse/elaboration errors and empty extractions
    among the checked attempts."""
    checked = [p for p in summary.problems if p.n]
    if not checked:
        raise ValueError(f"{direction} alpha={alpha:g}: no attempt was checked")
    values = {p.name: p.c / p.n for p in checked}
    per_unit = {
        p.name: {
            "attempts": float(p.n),
            "correct": float(p.c),
            **{f"pass@{k}": pass_at_k(p.n, p.c, k) for k in summary.ks if k <= p.n},
        }
        for p in checked
    }
    extra = {
        f"share_{c.value}": share
        for c in summary.coherence
        if c is not Coherence.SERVER_ERROR  # a failed check says nothing about the output
        and (share := summary.coherence_fraction(c)) is not None
    }
    extra.update(
        {f"pass@{k}": value for k, value in summary.pass_at_k.items() if value is not None}
    )
    extra["attempts"] = float(sum(p.n for p in checked))
    extra["correct"] = float(sum(p.c for p in checked))
    coherent = summary.coherent_fraction
    return DoseCondition(
        direction,
        alpha,
        values,
        incoherent=1.0 - coherent if coherent is not None else 0.0,
        extra=extra,
        weights={p.name: float(p.n) for p in checked},
        per_unit=per_unit,
    )


@dataclass(frozen=True)
class DosageCurve:
    """One CLB direction's grid for one model and setting: points, trends, the logs used."""

    diagnostic: str
    model: str
    setting: dict[str, Any]
    base: str
    metric: str
    points: list[CurvePoint]
    trends: list[Trend]
    logs: dict[str, str]
    notes: list[str] = field(default_factory=list)

    @property
    def title(self) -> str:
        return f"{self.diagnostic} dosage curve: {self.model}"

    @property
    def settings_text(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.setting.items() if v is not None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "diagnostic": self.diagnostic,
            "model": self.model,
            "setting": self.setting,
            "base": self.base,
            "metric": self.metric,
            "points": [asdict(p) for p in self.points],
            "trends": [asdict(t) for t in self.trends],
            "logs": self.logs,
            "notes": self.notes,
        }


def build_curve(
    cells: Sequence[tuple[str, float, LoadedLog]],
    *,
    target: SteeringTarget,
    base: str,
    notes: list[str] | None = None,
) -> DosageCurve:
    """A curve from its cells ``(direction, alpha, log)``, each read into a point by
    ``target``'s rule; the baseline is ``(BASELINE, 0)``.

    Every S2B-LM point is checked against the episodes the curve's direction was extracted
    from (recorded by each steered run); a point evaluated on them is flagged and named in
    the notes.
    """
    first = cells[0][2]
    conditions, logs, notes = [], {}, list(notes or [])
    extraction = _extraction([loaded for _, _, loaded in cells])
    for direction, alpha, loaded in cells:
        try:
            cell = target.condition(direction, alpha, loaded.summary)
        except ValueError as exc:
            notes.append(f"{exc} ({loaded.path}): left out")
            continue
        overlap = target.held_out(extraction, loaded) if extraction and target.held_out else set()
        if overlap:
            cell = dataclasses.replace(cell, overlaps_extraction=True)
            seeds = ", ".join(str(s) for s in sorted(overlap))
            notes.append(
                f"{direction} alpha={alpha:g} evaluates episode seeds {seeds}, which the "
                "direction was extracted from: not a held-out point (evaluate other seeds, or "
                "extract from seeds that no run evaluates)"
            )
        conditions.append(cell)
        logs[f"{direction}@{alpha:g}"] = str(loaded.path)
    if not conditions:
        raise ValueError(f"no cell of the dosage grid for {base} was scored: {'; '.join(notes)}")
    directions = [d for d in dict.fromkeys(c.direction for c in conditions) if d != BASELINE]
    return DosageCurve(
        diagnostic=first.diagnostic.name,
        model=first.info.model if first.info else first.path.stem,
        setting=_setting(first.info),
        base=base,
        metric=target.metric,
        points=curve_points(conditions),
        trends=[trend(d, conditions) for d in directions],
        logs=logs,
        notes=notes,
    )


def _extraction(cells: Sequence[LoadedLog]) -> Extraction | None:
    """Where the curve's direction came from, as its steered runs recorded it (the controls
    repeat the CLB card's extraction); None for logs written before runs recorded it."""
    for loaded in cells:
        record = (loaded.info.metadata.get("steering") or {}) if loaded.info else {}
        if record.get("extraction"):
            return Extraction.from_json(record["extraction"])
    return None


def s2b_held_out(extraction: Extraction, loaded: LoadedLog) -> set[int]:
    """The S2B-LM episodes of ``loaded`` that ``extraction`` read (S2B-LM's ``held_out``)."""
    summary = cast(S2BRunSummary, loaded.summary)
    config = loaded.info.metadata.get("config") if loaded.info else None
    seeds = {int(row["seed"]) for row in summary.per_seed}
    return seed_overlap(extraction, seeds, summary.preset, config)


def _setting(info: RunInfo | None) -> dict[str, Any]:
    args = info.task_args if info else {}
    return {k: v for k, v in args.items() if k not in STEERING_ARGS}


def _key(loaded: LoadedLog) -> str:
    """Diagnostic, model and settings: what a steered run and its baseline must share."""
    info = loaded.info
    model = info.model if info else ""
    return json.dumps([loaded.diagnostic.task, model, _setting(info)], sort_keys=True, default=str)


def _sweep_of(loaded: LoadedLog) -> str | None:
    return loaded.info.metadata.get(SWEEP_KEY) if loaded.info else None


def _baseline(candidates: Sequence[LoadedLog], cells: Sequence[LoadedLog]) -> LoadedLog | None:
    """The unsteered run for a curve: the one its own sweep ran when there is one, otherwise
    the last of the candidates (logs sort by start time)."""
    sweeps = {_sweep_of(cell) for cell in cells} - {None}
    own = [c for c in candidates if _sweep_of(c) in sweeps]
    chosen = own or list(candidates)
    return chosen[-1] if chosen else None


def dosage_curves(
    logs: Sequence[LoadedLog], notes: list[str], target_of: TargetOf
) -> list[DosageCurve]:
    """Group the steered logs among ``logs`` (those of a task ``target_of`` knows) into
    curves, each with its unsteered baseline; a grid none of whose runs was scored is named in
    ``notes``."""
    baselines: dict[str, list[LoadedLog]] = {}
    groups: dict[tuple[str, str], dict[tuple[str, float], LoadedLog]] = {}
    duplicates: dict[tuple[str, str], list[str]] = {}
    targets: dict[tuple[str, str], SteeringTarget] = {}
    for loaded in logs:
        target = target_of(loaded.diagnostic.task)
        if target is None:
            continue
        steering = steering_of(loaded.info)
        if steering is None:
            baselines.setdefault(_key(loaded), []).append(loaded)
            continue
        group = (_key(loaded), steering.base)
        targets[group] = target
        cell = (steering.kind, steering.alpha)
        cells = groups.setdefault(group, {})
        if cell in cells:
            duplicates.setdefault(group, []).append(
                f"{steering.kind} alpha={steering.alpha:g}: two runs, {loaded.path} is used"
            )
        cells[cell] = loaded
    curves = []
    for (key, base), cells in groups.items():
        group_notes = duplicates.get((key, base), [])
        ordered = [(d, a, cells[(d, a)]) for d, a in sorted(cells, key=_direction_order)]
        baseline = _baseline(baselines.get(key, []), list(cells.values()))
        if baseline is None:
            group_notes.append("no unsteered run with the same settings: no alpha = 0 point")
        else:
            ordered.insert(0, (BASELINE, 0.0, baseline))
        try:
            curves.append(
                build_curve(ordered, target=targets[(key, base)], base=base, notes=group_notes)
            )
        except ValueError as exc:
            notes.append(str(exc))
    return curves


def _direction_order(cell: tuple[str, float]) -> tuple[int, str, float]:
    direction, alpha = cell
    return (0 if direction == "clb" else 1, direction, alpha)


def dosage_rows(
    model: str, target: SteeringTarget, points: Sequence[CurvePoint], logs: Mapping[str, str]
) -> list[GapRow]:
    """One gap-profile row per condition of a sweep's grid: its mean metric with the CI,
    named and scaled as the sweep's steering target says."""
    metric = target.label or target.metric
    return [
        GapRow(
            model=model,
            diagnostic="steering",
            metric=f"{metric} [{p.direction}, alpha={p.alpha:g}]",
            value=p.mean,
            ci=(p.ci_low, p.ci_high) if p.ci_low is not None and p.ci_high is not None else None,
            n=p.n,
            log=logs.get(f"{p.direction}@{p.alpha:g}", ""),
            unit=target.unit,
        )
        for p in points
    ]
