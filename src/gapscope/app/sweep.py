"""The steering grid: every direction at every alpha, one Inspect task (and log) per condition.

``run_sweep`` (behind ``gapscope run steer``) prepares the directions in ``OUT/directions/``
(the CLB direction, extracted unless one is given, and its seeded controls), then runs the
baseline (alpha = 0 is the unsteered model, identical for every direction) and every other
(direction, alpha) side by side in one Inspect eval: one model load, and the engine decodes the
conditions' requests in shared batches (each row steered its own way, exactly as alone; see
``gapscope.models.hooks.RowAdditions``). It writes into ``OUT``: ``curve.csv`` and
``curve.json`` (every point, every trend, every log) and ``dosage.png``/``dosage.svg``.
Every run is an ordinary Inspect log that records its direction, so ``gapscope report`` over
the log directory draws the same curve (:mod:`gapscope.analysis.steering`).

The diagnostic is any spec that declares a steering target
(:class:`gapscope.analysis.spec.SteeringTarget`: how a steered run is built, its metric, its
default grid): S2B-LM (metric: ZSCT per episode; incoherent: unparseable answers; Figure 5's
alphas and both controls), prove (metric: the per-attempt solve rate, pass@k beside it;
incoherent: parse/elaboration errors and empty extractions; Figures 6-7's -3, 0, +1 and the
random control), or an installed one. By default the CLB direction is extracted from episodes
disjoint from the ones the S2B sweep evaluates (seeds from ``extract_first_seed``), so no
evaluated game was seen during extraction.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai.log import EvalLog

from gapscope.analysis import (
    SWEEP_KEY,
    DiagnosticSpec,
    DosageCurve,
    LoadedLog,
    SpecError,
    build_curve,
    dosage_figure,
    loaded_from,
    save_figure,
    spec_named,
    specs,
)
from gapscope.models import SteeringVector, engine_for, load_direction
from gapscope.s2b import DEFAULT_CORRUPTION, Corruption, check_corruption, resolve
from gapscope.steer import (
    BASELINE,
    CONTROLS,
    EXTRACTION_FIRST_SEED,
    CurvePoint,
    Trend,
    control,
    extract_direction,
)

RunTasks = Callable[[list[Task], str], list[EvalLog]]
"""Runs tasks side by side on a model and returns their logs in task order
(``app.kit.run_tasks`` with a log dir)."""


@dataclass(frozen=True)
class SweepSpec:
    """Everything one grid needs; defaults follow the seed (``alphas``/``controls`` left None:
    the grid of the diagnostic's steering target).

    ``preset``, ``seeds``, ``max_tokens`` and ``overrides`` are the S2B-LM episodes the CLB
    direction is extracted from, and what a target that plays them (S2B-LM) evaluates;
    ``task_args`` are the steered task's own arguments (prove: ``dataset``, ``n``, ...).
    """

    model: str
    out: Path
    alphas: tuple[float, ...] | None = None
    controls: tuple[str, ...] | None = None
    control_seed: int = 0
    steer: Path | None = None
    diagnostic: str = "s2b"
    preset: str = "cat-10shot"
    seeds: int = 4
    first_seed: int = 0
    extract_first_seed: int = EXTRACTION_FIRST_SEED
    corruption: Corruption = DEFAULT_CORRUPTION
    layers: str = "last-quarter"
    max_tokens: int = 256
    overrides: dict[str, Any] = field(default_factory=dict)
    task_args: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        target = self.target.steering
        if target is None:
            steerable = ", ".join(s.name for s in specs() if s.steering)
            raise SpecError(
                f"diagnostic {self.diagnostic} declares no steering target; steerable: {steerable}"
            )
        alphas = target.alphas if self.alphas is None else self.alphas
        object.__setattr__(self, "alphas", alphas)
        controls = target.controls if self.controls is None else self.controls
        object.__setattr__(self, "controls", controls)
        check_corruption(self.corruption)
        unknown = [c for c in self.grid_controls if c not in CONTROLS]
        if unknown:
            raise ValueError(f"unknown control(s) {unknown}; choose from {', '.join(CONTROLS)}")
        if not self.grid_alphas:
            raise ValueError("alphas lists no value")
        missing = [
            f"-T {arg}=... ({what})"
            for arg, what in target.needs.items()
            if arg not in self.task_args
        ]
        if missing:
            raise ValueError(f"--diagnostic {self.diagnostic} needs {', '.join(missing)}")

    @property
    def target(self) -> DiagnosticSpec:
        """The diagnostic steered (raises SpecError naming the known ones)."""
        return spec_named(self.diagnostic)

    @property
    def steered_args(self) -> dict[str, Any]:
        """The steered task's arguments: the episode settings for a target that plays the
        extraction's episodes, then ``task_args``."""
        steering = self.target.steering
        episode: dict[str, Any] = {}
        if steering is not None and steering.plays_episodes:
            episode = {"preset": self.preset, "seeds": self.seeds, "first_seed": self.first_seed}
            episode |= {"max_tokens": self.max_tokens, **self.overrides}
        return episode | self.task_args

    @property
    def grid_alphas(self) -> tuple[float, ...]:
        """The alphas, defaults resolved."""
        return self.alphas or ()

    @property
    def grid_controls(self) -> tuple[str, ...]:
        """The control kinds, defaults resolved."""
        return self.controls or ()


@dataclass(frozen=True)
class SweepResult:
    points: list[CurvePoint]
    trends: list[Trend]
    logs: dict[str, str]
    files: dict[str, str]
    notes: list[str] = field(default_factory=list)


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
            corruption=spec.corruption,
        )
    paths = {"clb": clb.save(root / "clb")}
    for kind in spec.grid_controls:
        paths[kind] = control(clb, kind, spec.control_seed).save(root / kind)
    return paths


def _task(spec: SweepSpec, steer: Path | None, alpha: float) -> Task:
    steer_arg = None if steer is None else str(steer)
    task = spec.target.steered_task(spec.steered_args, steer_arg, alpha)
    # the unsteered baseline too: it is a point of the curve, not a run of the model's profile
    task.metadata = {**(task.metadata or {}), SWEEP_KEY: str(spec.out)}
    return task


def _cell_key(steer: object, alpha: float | None) -> tuple[str | None, float]:
    """A grid point as its task's ``steer`` and ``alpha`` arguments name it."""
    return (None if steer is None else str(steer), float(alpha or 0.0))


@dataclass(frozen=True)
class SweepCell:
    """One point of the grid: its direction's name (``BASELINE`` for alpha 0) and directory
    (None for the baseline), its alpha, and the task that measures it."""

    direction: str
    steer: Path | None
    alpha: float
    task: Task

    @property
    def key(self) -> tuple[str | None, float]:
        """What its task was given, as its log records it (``task_args``)."""
        return _cell_key(self.steer, self.alpha)


def sweep_cells(spec: SweepSpec, directions: dict[str, Path]) -> list[SweepCell]:
    """The grid's tasks: the unsteered baseline, then every direction at every non-zero
    alpha."""
    cells = [SweepCell(BASELINE, None, 0.0, _task(spec, None, 0.0))]
    cells += [
        SweepCell(name, path, a, _task(spec, path, a))
        for name, path in directions.items()
        for a in spec.grid_alphas
        if a != 0
    ]
    return cells


def cell_logs(
    spec: SweepSpec, cells: list[SweepCell], loaded: Iterable[LoadedLog]
) -> list[LoadedLog]:
    """Each cell's log among ``loaded`` (a study's finished logs, which hold other tasks
    too), in the order of ``cells``: the log of this sweep whose task was given the cell's
    direction and alpha. Raises RuntimeError naming every cell no log ran."""
    found: dict[tuple[str | None, float], LoadedLog] = {}
    for log in loaded:
        info = log.info
        if info is not None and info.metadata.get(SWEEP_KEY) == str(spec.out):
            found[_cell_key(info.task_args.get("steer"), info.task_args.get("alpha"))] = log
    missing = [f"{c.direction} alpha={c.alpha:g}" for c in cells if c.key not in found]
    if missing:
        raise RuntimeError(f"no finished run of {', '.join(missing)}")
    return [found[cell.key] for cell in cells]


def run_sweep(spec: SweepSpec, run: RunTasks) -> SweepResult:
    """Run the whole grid at once and write its files; a failed run fails the sweep with its
    log."""
    directions = prepare_directions(spec)
    cells = sweep_cells(spec, directions)
    logs = run([cell.task for cell in cells], spec.model)
    for cell, log in zip(cells, logs, strict=True):
        if log.status != "success":
            reason = log.error.message if log.error else log.status
            raise RuntimeError(
                f"{cell.direction} alpha={cell.alpha:g} failed: {reason} (log: {log.location})"
            )
    return finish_sweep(spec, directions, cells, [loaded_from(log) for log in logs])


def finish_sweep(
    spec: SweepSpec, directions: dict[str, Path], cells: list[SweepCell], logs: list[LoadedLog]
) -> SweepResult:
    """The curve of the grid's finished runs (``logs``, in the order of ``cells``), and its
    files.

    The curve is read back from the runs' logs by the analysis layer, exactly as
    ``gapscope report`` reads it later, so the sweep's files and the report agree.
    """
    done = [(cell.direction, cell.alpha, log) for cell, log in zip(cells, logs, strict=True)]
    # the CLB direction as every steered run loaded it (cached by path): no second read
    base = load_direction(str(directions["clb"])).fingerprint
    target = spec.target.steering
    assert target is not None  # SweepSpec refuses a diagnostic without one
    curve = build_curve(done, target=target, base=base)
    files = _write(spec, curve, directions)
    return SweepResult(curve.points, curve.trends, curve.logs, files, curve.notes)


def _write(spec: SweepSpec, curve: DosageCurve, directions: dict[str, Path]) -> dict[str, str]:
    spec.out.mkdir(parents=True, exist_ok=True)
    csv_path, json_path = spec.out / "curve.csv", spec.out / "curve.json"
    points = curve.points
    extras = sorted({key for p in points for key in p.extra})
    columns = ["direction", "alpha", "n", "mean", "sd", "ci_low", "ci_high", "incoherent"]
    columns += ["relative_drop", "overlaps_extraction"]
    with csv_path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow([*columns, *extras])
        for p in points:
            row = [getattr(p, c) for c in columns]
            writer.writerow([*row, *(p.extra.get(key, "") for key in extras)])
    png, svg = save_figure(dosage_figure(curve), spec.out)
    files = {"csv": str(csv_path), "json": str(json_path), "png": str(png), "svg": str(svg)}
    document = {
        "spec": {k: str(v) if isinstance(v, Path) else v for k, v in asdict(spec).items()},
        "directions": {name: str(path) for name, path in directions.items()},
        **curve.to_dict(),
        "files": files,
    }
    json_path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return files
