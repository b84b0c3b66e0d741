"""The steering grid: every direction at every alpha, one Inspect run per condition.

``run_sweep`` (behind ``gapscope run steer``) prepares the directions in ``OUT/directions/``
(the CLB direction, extracted unless one is given, and its seeded controls), runs the baseline
once (alpha = 0 is the unsteered model, identical for every direction) and every other
(direction, alpha), and writes into ``OUT``: ``curve.csv`` and ``curve.json`` (every point,
every trend, every log) and ``dosage.png``/``dosage.svg``.

The diagnostic is S2B-LM (metric: ZSCT per episode; incoherent: unparseable answers) or prove
(metric: pass@k per problem at the largest k; incoherent: parse/elaboration errors and empty
extractions). By default the CLB direction is extracted from episodes disjoint from the ones
the S2B sweep evaluates (seeds from ``extract_first_seed``), so no evaluated game was seen
during extraction.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from inspect_ai import Task
from inspect_ai.log import EvalLog

from gapscope.analysis.s2b import summarize as summarize_s2b
from gapscope.s2b.config import resolve
from gapscope.s2b.metrics import adj_zsct
from gapscope.s2b.task import s2b_lm
from gapscope.steer.controls import CONTROLS, control
from gapscope.steer.dosage import BASELINE, Condition, CurvePoint, Trend, curve_points, trend
from gapscope.steer.extract import extract_direction
from gapscope.steer.figure import write_figure
from gapscope.steer.task import engine_for
from gapscope.steer.vector import SteeringVector

Diagnostic = Literal["s2b", "prove"]
RunTask = Callable[[Task, str], EvalLog]
"""Runs one task on a model and returns its log (``clikit.run_task`` with a log dir)."""


@dataclass(frozen=True)
class SweepSpec:
    """Everything one grid needs; defaults follow the seed (Figure 5: alpha from -4 to +1)."""

    model: str
    out: Path
    alphas: tuple[float, ...] = (-4.0, -3.0, -2.0, -1.0, 0.0, 1.0)
    controls: tuple[str, ...] = ("orthogonal", "random")
    control_seed: int = 0
    steer: Path | None = None
    diagnostic: Diagnostic = "s2b"
    preset: str = "cat-10shot"
    seeds: int = 4
    first_seed: int = 0
    extract_first_seed: int = 1000
    layers: str = "last-quarter"
    max_tokens: int = 256
    overrides: dict[str, Any] = field(default_factory=dict)
    prove_args: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = [c for c in self.controls if c not in CONTROLS]
        if unknown:
            raise ValueError(f"unknown control(s) {unknown}; choose from {', '.join(CONTROLS)}")
        if not self.alphas:
            raise ValueError("alphas lists no value")
        if self.diagnostic not in ("s2b", "prove"):
            raise ValueError(f"diagnostic must be s2b or prove, got {self.diagnostic!r}")
        if self.diagnostic == "prove" and "dataset" not in self.prove_args:
            raise ValueError("--diagnostic prove needs --dataset (miniF2F JSONL or hub id)")


@dataclass(frozen=True)
class SweepResult:
    points: list[CurvePoint]
    trends: list[Trend]
    logs: dict[str, str]
    files: dict[str, str]


def parse_alphas(spec: str) -> tuple[float, ...]:
    """``"-4,-3,0,1"`` -> (-4.0, -3.0, 0.0, 1.0), in the given order, duplicates dropped."""
    try:
        values = tuple(dict.fromkeys(float(part) for part in spec.split(",") if part.strip()))
    except ValueError:
        raise ValueError(f"alphas must be a comma list of numbers, got {spec!r}") from None
    if not values:
        raise ValueError("alphas lists no value")
    return values


def prepare_directions(spec: SweepSpec) -> dict[str, Path]:
    """The CLB direction (given, or extracted now) and its controls, each in a directory."""
    root = spec.out / "directions"
    if spec.steer is not None:
        clb = SteeringVector.load(spec.steer)
    else:
        config = resolve(spec.preset, **spec.overrides)
        seeds = range(spec.extract_first_seed, spec.extract_first_seed + spec.seeds)
        clb = extract_direction(
            engine_for(spec.model),
            model_id=spec.model,
            config=config,
            preset=spec.preset,
            seeds=list(seeds),
            layers=spec.layers,
        )
    paths = {"clb": clb.save(root / "clb")}
    for kind in spec.controls:
        paths[kind] = control(clb, kind, spec.control_seed).save(root / kind)
    return paths


def _task(spec: SweepSpec, steer: Path | None, alpha: float) -> Task:
    steer_arg = None if steer is None else str(steer)
    if spec.diagnostic == "prove":
        from gapscope.prove.task import prove

        return prove(**spec.prove_args, steer=steer_arg, alpha=alpha)
    return s2b_lm(
        preset=spec.preset,
        seeds=spec.seeds,
        first_seed=spec.first_seed,
        max_tokens=spec.max_tokens,
        steer=steer_arg,
        alpha=alpha,
        **spec.overrides,
    )


def _s2b_condition(direction: str, alpha: float, log: EvalLog) -> Condition:
    summary = summarize_s2b(log)
    rows = [row for row in summary.per_seed if "error" not in row]
    if not rows:
        raise RuntimeError(f"{direction} alpha={alpha}: no episode was scored ({log.location})")
    queries = sum(
        sum(g["phase"] == "query" for g in sample.store.get("games", []))
        for sample in log.samples or []
    )
    unparsed = sum(row["unparsed"] for row in rows)
    zsct = {str(row["seed"]): float(row["zsct"]) for row in rows}
    mean = sum(zsct.values()) / len(zsct)
    return Condition(
        direction,
        alpha,
        zsct,
        incoherent=unparsed / queries if queries else 0.0,
        extra={"adj_zsct": adj_zsct(mean)},
    )


def _prove_condition(direction: str, alpha: float, log: EvalLog) -> Condition:
    from gapscope.prove.analysis import read_run
    from gapscope.prove.analysis import summarize as summarize_prove

    summary = summarize_prove(read_run(log))
    k = max(summary["pass_at_k"], key=int)
    values = {
        p["name"]: float(p["pass_at_k"][k])
        for p in summary["per_problem"]
        if p["pass_at_k"][k] is not None
    }
    coherent = summary["coherent_fraction"]
    overall = summary["pass_at_k"][k]
    extra = {
        f"share_{name}": share
        for name, share in summary["coherence_fraction"].items()
        if share is not None
    }
    if overall is not None:
        extra[f"pass@{k}"] = overall
    return Condition(
        direction,
        alpha,
        values,
        incoherent=1.0 - coherent if coherent is not None else 0.0,
        extra=extra,
    )


def run_sweep(spec: SweepSpec, run: RunTask) -> SweepResult:
    """Run the whole grid and write its files; a failed run stops the sweep with its log."""
    directions = prepare_directions(spec)
    read = _prove_condition if spec.diagnostic == "prove" else _s2b_condition
    cells: list[tuple[str, float, Path | None]] = [(BASELINE, 0.0, None)]
    cells += [(name, a, path) for name, path in directions.items() for a in spec.alphas if a != 0]
    conditions: list[Condition] = []
    logs: dict[str, str] = {}
    for name, alpha, path in cells:
        log = run(_task(spec, path, alpha), spec.model)
        logs[f"{name}@{alpha:g}"] = log.location
        if log.status != "success":
            reason = log.error.message if log.error else log.status
            raise RuntimeError(f"{name} alpha={alpha:g} failed: {reason} (log: {log.location})")
        conditions.append(read(name, alpha, log))
    points = curve_points(conditions)
    trends = [trend(name, conditions) for name in directions]
    files = _write(spec, points, trends, logs, directions)
    return SweepResult(points, trends, logs, files)


def _write(
    spec: SweepSpec,
    points: Sequence[CurvePoint],
    trends: Sequence[Trend],
    logs: dict[str, str],
    directions: dict[str, Path],
) -> dict[str, str]:
    metric = "zsct" if spec.diagnostic == "s2b" else "pass@k"
    spec.out.mkdir(parents=True, exist_ok=True)
    csv_path, json_path = spec.out / "curve.csv", spec.out / "curve.json"
    extras = sorted({key for p in points for key in p.extra})
    columns = ["direction", "alpha", "n", "mean", "sd", "ci_low", "ci_high", "incoherent"]
    with csv_path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow([*columns, *extras])
        for p in points:
            row = [getattr(p, c) for c in columns]
            writer.writerow([*row, *(p.extra.get(key, "") for key in extras)])
    title = f"{spec.diagnostic} dosage curve: {spec.model}"
    png, svg = write_figure(points, spec.out, metric=metric, title=title)
    files = {"csv": str(csv_path), "json": str(json_path), "png": str(png), "svg": str(svg)}
    document = {
        "metric": metric,
        "spec": {k: str(v) if isinstance(v, Path) else v for k, v in asdict(spec).items()},
        "directions": {name: str(path) for name, path in directions.items()},
        "points": [asdict(p) for p in points],
        "trends": [asdict(t) for t in trends],
        "logs": logs,
        "files": files,
    }
    json_path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return files
