"""Per-family counts in the format the OracleLadder authors released for their model panel.

A released panel is two JSONL files per model: the parent probes, one record per (family,
condition) ``{model, condition, pid, n_correct, k}``, and Stage 0, one record per (family,
milestone) ``{model, pid, ms_idx, ms_type, n_correct, k, max_tokens}``. Reading them into the
same :class:`~gapscope.analysis.ladder.ModelRun` a log gives lets ``gapscope ladder report``
rebuild the paper's tables from the authors' results, or compare another harness's results
with ours, with no second analysis path.

A count of ``n_correct`` out of ``k`` becomes ``k`` graded rollouts, ``n_correct`` of them
correct: outcome levels and the taxonomy only need "at least tau correct", and per-rollout
direct accuracy is ``sum n_correct / sum k`` either way. ``ms_idx`` is the 0-based index
into the family's ``milestones``; Stage 0 counts of milestones the family does not test
(INTEGRATE, or listed in ``milestone_gold_invalid`` when the families are read corrected)
are ignored, as in our own runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from gapscope.analysis.ladder import ModelRun, Rollout
from gapscope.ladder import LADDER, Condition, FamiliesVersion, Family, load_families
from gapscope.records import jsonl_rows

RELEASED_CONDITIONS: dict[str, Condition] = {
    "C1_direct": Condition.C1,
    "C2_descriptions": Condition.C2,
    "C3_gold_answers": Condition.C3,
    "C2_random": Condition.C2_RANDOM,
    "C2_generic": Condition.C2_GENERIC,
    "C3_mismatched": Condition.C3_MISMATCHED,
}
"""The released condition names and the probe each one is."""


K = TypeVar("K", tuple[str, Condition], tuple[str, int])


class PanelError(ValueError):
    """A released panel file that cannot be read as stated; the message names file and line."""


@dataclass(frozen=True)
class _Count:
    model: str
    pid: str
    n_correct: int
    k: int


def _count(
    path: Path, line: int, record: object, extra: tuple[str, ...]
) -> tuple[_Count, dict[str, object]]:
    where = f"{path}:{line}"
    if not isinstance(record, dict):
        raise PanelError(f"{where}: expected a JSON object")
    missing = [key for key in ("model", "pid", "n_correct", "k", *extra) if key not in record]
    if missing:
        raise PanelError(f"{where}: missing field(s) {', '.join(missing)}")
    n_correct, k = record["n_correct"], record["k"]
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise PanelError(f"{where}: field k must be a positive integer, got {k!r}")
    if not isinstance(n_correct, int) or isinstance(n_correct, bool) or not 0 <= n_correct <= k:
        raise PanelError(
            f"{where}: field n_correct must be an integer in [0, {k}], got {n_correct!r}"
        )
    return _Count(str(record["model"]), str(record["pid"]), n_correct, k), record


def _rows(path: Path) -> list[tuple[int, object]]:
    rows, bad = jsonl_rows(path.read_text(encoding="utf-8"))
    if bad:
        raise PanelError(f"{path}: {bad[0]}")
    if not rows:
        raise PanelError(f"{path}: no records")
    return rows


def _one_model(path: Path, counts: Sequence[_Count]) -> str:
    models = sorted({c.model for c in counts})
    if len(models) != 1:
        raise PanelError(f"{path}: one model per file expected, found {', '.join(models)}")
    return models[0]


def _rollouts(pid: str, condition: Condition, index: int | None, count: _Count) -> list[Rollout]:
    return [Rollout(pid, condition, index, i < count.n_correct) for i in range(count.k)]


def read_panel(parent: Path, stage0: Path, families: Sequence[Family]) -> ModelRun:
    """One model's released parent-probe and Stage 0 counts as a :class:`ModelRun`.

    Every family needs its C1, C2 and C3 counts and a Stage 0 count for every tested
    milestone (controls are optional); a record of a family not in ``families``, a duplicate
    record, or two files naming different models is an error.
    """
    by_pid = {f.pid: f for f in families}
    parent_counts: dict[tuple[str, Condition], _Count] = {}
    for line, record in _rows(parent):
        count, raw = _count(parent, line, record, ("condition",))
        condition = RELEASED_CONDITIONS.get(str(raw["condition"]))
        if condition is None:
            raise PanelError(
                f"{parent}:{line}: unknown condition {raw['condition']!r}; "
                f"expected one of {', '.join(RELEASED_CONDITIONS)}"
            )
        _add(parent_counts, (count.pid, condition), count, parent, line, by_pid)
    stage0_counts: dict[tuple[str, int], _Count] = {}
    for line, record in _rows(stage0):
        count, raw = _count(stage0, line, record, ("ms_idx",))
        index = raw["ms_idx"]
        if not isinstance(index, int) or isinstance(index, bool) or index < 0:
            raise PanelError(
                f"{stage0}:{line}: field ms_idx must be an integer >= 0, got {index!r}"
            )
        _add(stage0_counts, (count.pid, index), count, stage0, line, by_pid)
    model = _one_model(parent, list(parent_counts.values()))
    if _one_model(stage0, list(stage0_counts.values())) != model:
        raise PanelError(f"{parent} is model {model!r} but {stage0} is another model")
    rollouts: list[Rollout] = []
    for family in families:
        for condition in RELEASED_CONDITIONS.values():
            found = parent_counts.get((family.pid, condition))
            if found is not None:
                rollouts += _rollouts(family.pid, condition, None, found)
            elif condition in LADDER:
                raise PanelError(f"{parent}: no {condition.value} record for family {family.pid}")
        for position, index in enumerate(family.tested_indices):
            found = stage0_counts.get((family.pid, index))
            if found is None:
                raise PanelError(
                    f"{stage0}: no record for milestone {index} of family {family.pid}"
                )
            rollouts += _rollouts(family.pid, Condition.S0, position, found)
    tested = {f.pid: len(f.tested_indices) for f in families}
    return ModelRun(model, str(parent), rollouts, tested)


def _add(
    table: dict[K, _Count],
    key: K,
    count: _Count,
    path: Path,
    line: int,
    by_pid: dict[str, Family],
) -> None:
    if count.pid not in by_pid:
        raise PanelError(f"{path}:{line}: family {count.pid} is not in the families file")
    if key in table:
        raise PanelError(f"{path}:{line}: a second record for {key}")
    table[key] = count


def read_panels(
    parents: Sequence[Path],
    stage0s: Sequence[Path],
    families: Path | None,
    version: FamiliesVersion = FamiliesVersion.CORRECTED,
) -> list[ModelRun]:
    """``--panel``/``--stage0`` pairs (one per model, in order) over the ``--families`` file,
    read at ``version`` (``published`` reproduces the paper: see ``FamiliesVersion``)."""
    if len(parents) != len(stage0s):
        raise PanelError(f"{len(parents)} --panel file(s) but {len(stage0s)} --stage0 file(s)")
    if not parents:
        return []
    if families is None:
        raise PanelError("--panel needs --families: the family set the panel was run on")
    loaded = load_families(families, version=version)
    if not loaded.families:
        raise PanelError(f"{families}: no valid family ({'; '.join(map(str, loaded.problems))})")
    return [read_panel(p, s, loaded.families) for p, s in zip(parents, stage0s, strict=True)]
