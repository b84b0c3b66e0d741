"""``gapscope compare`` (and the report's comparisons): two models on the same items, exact
McNemar per metric, paired bootstrap CI of the rate difference, Holm across the metrics, and
each diagnostic's own outcome matrices (its spec's ``transitions``: OracleLadder's).

Each diagnostic's summary names its per-item binary outcomes (``outcomes()``): S2B query
decisions, OracleLadder families solved per condition, O-NNG problems per lambda, prove
problems proven, T2 records. Only items the model answered are outcomes (an unanswered
sample is no item: :func:`~gapscope.analysis.logs.counted_samples`). A paired test is only
valid on the same items, so differing item sets are refused with the count that differs,
unless the caller asks for the intersection.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from gapscope.analysis.diagnostics import LoadedLog
from gapscope.analysis.profile import GapRow
from gapscope.analysis.steering import is_steering_run
from gapscope.analysis.table import specs
from gapscope.stats import (
    DifferenceCI,
    McNemarResult,
    holm,
    mcnemar_exact,
    paired_bootstrap_difference,
)

BOOTSTRAP_RESAMPLES = 10_000


class ComparisonError(ValueError):
    """The two sides cannot be paired (different items, nothing in common)."""


@dataclass(frozen=True)
class MetricComparison:
    """One metric compared on its paired items (A - B: positive means A does better)."""

    diagnostic: str
    metric: str
    mcnemar: McNemarResult
    difference: DifferenceCI
    p_holm: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "diagnostic": self.diagnostic,
            "metric": self.metric,
            "n": self.mcnemar.n,
            "a_only": self.mcnemar.b,
            "b_only": self.mcnemar.c,
            "p_mcnemar": self.mcnemar.p_value,
            "p_holm": self.p_holm,
            "difference": self.difference.estimate,
            "difference_ci": [self.difference.low, self.difference.high],
        }


@dataclass(frozen=True)
class Comparison:
    """Everything ``gapscope compare`` reports."""

    a: str
    b: str
    metrics: list[MetricComparison]
    transitions: dict[str, dict[str, dict[str, int]]]
    notes: list[str] = field(default_factory=list)
    rows: list[GapRow] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "metrics": [m.to_dict() for m in self.metrics],
            "ladder_transitions": self.transitions,
            "notes": self.notes,
        }


Key = tuple[str, str]  # (diagnostic, metric)


def _outcomes(side: str, logs: Sequence[LoadedLog]) -> dict[Key, dict[str, bool]]:
    merged: dict[Key, dict[str, bool]] = {}
    for loaded in logs:
        for metric, items in loaded.summary.outcomes().items():
            target = merged.setdefault((loaded.diagnostic.name, metric), {})
            repeated = set(target) & set(items)
            if repeated:
                raise ComparisonError(
                    f"{side}: {len(repeated)} {metric} items appear in two logs "
                    f"(e.g. {sorted(repeated)[0]!r}); give one log per diagnostic and setting"
                )
            target.update(items)
    return merged


def _label(logs: Sequence[LoadedLog]) -> str:
    names = dict.fromkeys(r.model for loaded in logs for r in loaded.summary.rows())
    return ", ".join(names) or "(no results)"


def _no_scored_items(side: str, logs: Sequence[LoadedLog]) -> str:
    """Why a side cannot be compared: none of its logs has a scored item (a run stopped
    before its first score, or families never run); it is not a difference of item sets."""
    unfinished = [
        f"{x.path} (status {x.info.status})"
        for x in logs
        if x.info is not None and not x.info.finished
    ]
    why = (
        f"its runs did not finish: {', '.join(unfinished)}; finish them first (rerun the "
        "command that wrote them, or inspect eval-retry LOG)"
        if unfinished
        else "its logs hold no scored sample"
    )
    return f"no scored items on side {side} ({why}); there is nothing to pair"


def _paired_items(
    key: Key, a: dict[str, bool], b: dict[str, bool], intersect: bool, notes: list[str]
) -> list[str] | None:
    """The items both sides have (refusing differing sets unless ``intersect``); None when
    one side scored none (noted: that is not a difference of item sets)."""
    empty = [side for side, items in (("A", a), ("B", b)) if not items]
    if empty:
        notes.append(f"{key[0]} {key[1]}: no scored items on side {empty[0]}, not compared")
        return None
    only_a, only_b = set(a) - set(b), set(b) - set(a)
    both = sorted(set(a) & set(b))
    if only_a or only_b:
        counts = f"{len(only_a)} items only in A, {len(only_b)} only in B, {len(both)} in both"
        if not intersect:
            raise ComparisonError(
                f"{key[0]} {key[1]}: the item sets differ ({counts}); a paired test needs the "
                "same items: rerun on the same items or pass --intersect to compare the common ones"
            )
        notes.append(f"{key[0]} {key[1]}: compared on the common items only ({counts})")
    return both


def _disagreement(m: MetricComparison, alpha: float = 0.05) -> str | None:
    """Why the bootstrap interval and the exact test can disagree, where they do.

    With few paired items the percentile bootstrap of a difference of proportions is too
    narrow (it resamples the few discordant pairs and cannot see how few they are), so it can
    exclude 0 while the exact McNemar test, which conditions on the discordant count, does not
    reject. The exact test is the one to trust then.
    """
    d, mc = m.difference, m.mcnemar
    if d.low is None or d.high is None:
        return None
    excludes_zero = d.low > 0 or d.high < 0
    if excludes_zero == (mc.p_value < alpha):
        return None
    if excludes_zero:
        return (
            f"{m.diagnostic} {m.metric}: the bootstrap CI excludes 0 but the exact McNemar test "
            f"gives p = {mc.p_value:.3g} on n = {mc.n} paired items ({mc.b + mc.c} discordant): "
            "with so few items the bootstrap interval is too narrow; trust the exact test"
        )
    return (
        f"{m.diagnostic} {m.metric}: the exact McNemar test gives p = {mc.p_value:.3g} but the "
        f"bootstrap CI covers 0 (n = {mc.n}); the exact test is the one to trust"
    )


def compare_runs(
    a: Sequence[LoadedLog],
    b: Sequence[LoadedLog],
    *,
    intersect: bool = False,
    seed: int = 0,
    n_resamples: int = BOOTSTRAP_RESAMPLES,
    loading_notes: Sequence[str] = (),
) -> Comparison:
    """Pair the metrics both sides measured; refuse differing items unless ``intersect``.

    The steps, in order: set the steering runs aside (they are the same items under an
    intervention, read as a dosage curve, not a model-vs-model test); read each side's
    per-item outcomes, refusing a side with none; find the (diagnostic, metric) keys both
    measured, refusing none; note the keys only one side has; test each shared key on its
    paired items (McNemar, bootstrap, Holm across keys); add each diagnostic's own outcome
    matrices. ``loading_notes`` (what loading the logs found: runs that did not finish,
    superseded ones) come first in the comparison's notes.
    """
    a, steered_a = set_aside_steering("A", a)
    b, steered_b = set_aside_steering("B", b)
    out_a, out_b = scored_outcomes("A", a), scored_outcomes("B", b)
    common = shared_keys(out_a, out_b)
    notes = [*loading_notes, *steered_a, *steered_b, *unshared_notes(out_a, out_b, common)]
    rng = np.random.default_rng(seed)
    metrics = paired_tests(common, out_a, out_b, intersect, notes, rng, n_resamples)
    notes += [note for m in metrics if (note := _disagreement(m)) is not None]
    rows = [r for side in (a, b) for x in side for r in x.rows()]
    return Comparison(_label(a), _label(b), metrics, outcome_matrices(a, b), notes, rows)


def set_aside_steering(side: str, logs: Sequence[LoadedLog]) -> tuple[list[LoadedLog], list[str]]:
    """The logs of ``side`` that measure a model (not a steering intervention), and a note
    counting the ones set aside (none when there are none)."""
    kept = [x for x in logs if not is_steering_run(x)]
    count = len(logs) - len(kept)
    note = f"{side}: {count} steering runs left out (their dosage curves are in gapscope report)"
    return kept, [note] if count else []


def scored_outcomes(side: str, logs: Sequence[LoadedLog]) -> dict[Key, dict[str, bool]]:
    """The per-item outcomes of ``side``; raises ComparisonError when it scored no item."""
    outcomes = _outcomes(side, logs)
    if not any(outcomes.values()):
        raise ComparisonError(_no_scored_items(side, logs))
    return outcomes


class NothingInCommon(ComparisonError):
    """The two sides measured no (diagnostic, metric) in common: a reference listener and a
    model run only on OracleLadder, say. Not a fault of either side."""


def shared_keys(out_a: dict[Key, dict[str, bool]], out_b: dict[Key, dict[str, bool]]) -> list[Key]:
    """The (diagnostic, metric) keys both sides measured, in A's order; raises
    NothingInCommon (listing each side's metrics) when there is none."""
    common = [key for key in out_a if key in out_b]
    if not common:
        listed = {
            side: sorted(m for _, m in keys) or "none"
            for side, keys in (("A", out_a), ("B", out_b))
        }
        raise NothingInCommon(
            "A and B share no diagnostic and setting to compare "
            f"(A: {listed['A']}; B: {listed['B']})"
        )
    return common


def unshared_notes(
    out_a: dict[Key, dict[str, bool]], out_b: dict[Key, dict[str, bool]], common: Sequence[Key]
) -> list[str]:
    """One line per side listing the keys only it has (a reference listener has no ladder
    rows at all, say)."""
    notes = []
    for side, keys in (("A", out_a), ("B", out_b)):
        alone = [f"{d} {m}" for d, m in keys if (d, m) not in common]
        if alone:
            notes.append(f"only in {side}, not compared ({len(alone)}): {'; '.join(alone)}")
    return notes


def paired_tests(
    common: Sequence[Key],
    out_a: dict[Key, dict[str, bool]],
    out_b: dict[Key, dict[str, bool]],
    intersect: bool,
    notes: list[str],
    rng: np.random.Generator,
    n_resamples: int = BOOTSTRAP_RESAMPLES,
) -> list[MetricComparison]:
    """Each shared key on its paired items: exact McNemar and the paired bootstrap CI of
    A - B, then Holm across the keys tested. A key with no paired item is noted, not tested;
    differing item sets raise ComparisonError unless ``intersect``."""
    tests: list[tuple[Key, McNemarResult, DifferenceCI]] = []
    for key in common:
        items = _paired_items(key, out_a[key], out_b[key], intersect, notes)
        if items is None:
            continue
        if not items:
            notes.append(f"{key[0]} {key[1]}: no items in common, not compared")
            continue
        xs = [out_a[key][i] for i in items]
        ys = [out_b[key][i] for i in items]
        diff = paired_bootstrap_difference(xs, ys, n_resamples=n_resamples, rng=rng)
        tests.append((key, mcnemar_exact(xs, ys), diff))
    adjusted = holm([t[1].p_value for t in tests])
    return [
        MetricComparison(key[0], key[1], mc, diff, p)
        for (key, mc, diff), p in zip(tests, adjusted, strict=True)
    ]


def outcome_matrices(
    a: Sequence[LoadedLog], b: Sequence[LoadedLog]
) -> dict[str, dict[str, dict[str, int]]]:
    """Every diagnostic's own outcome matrices of A against B (OracleLadder's transitions)."""
    matrices: dict[str, dict[str, dict[str, int]]] = {}
    for spec in specs():
        if spec.transitions is not None:
            matrices.update(spec.transitions(a, b))
    return matrices


def print_comparison(comparison: Comparison, console: Console) -> None:
    """One line per metric compared, then the OracleLadder transition matrices."""
    table = Table(title=f"Paired comparison: A = {comparison.a} vs B = {comparison.b}")
    for col in ("diagnostic", "metric", "n", "A only", "B only", "A - B [95% CI]", "p", "p Holm"):
        table.add_column(col, justify="left" if col in ("diagnostic", "metric") else "right")
    for m in comparison.metrics:
        d = m.difference
        table.add_row(
            m.diagnostic,
            m.metric,
            str(m.mcnemar.n),
            str(m.mcnemar.b),
            str(m.mcnemar.c),
            d.text(),
            f"{m.mcnemar.p_value:.3g}",
            f"{m.p_holm:.3g}",
        )
    console.print(table)
    for name, matrix in comparison.transitions.items():
        trans = Table(title=f"OracleLadder transitions ({name}): A (rows) -> B (columns)")
        trans.add_column("")
        columns = list(next(iter(matrix.values())))
        for col in columns:
            trans.add_column(col, justify="right")
        for row_name, row in matrix.items():
            trans.add_row(row_name, *(str(row[c]) for c in columns))
        console.print(trans)
