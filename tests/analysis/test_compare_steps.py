"""``compare_runs``'s steps one by one, on summaries whose outcomes are written out here, so
each step's rule is checked by hand: steering runs set aside, a side with nothing scored
refused, shared keys found (or NothingInCommon), the keys one side has noted, the paired tests
Holm-adjusted, each diagnostic's outcome matrices added."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gapscope.analysis.compare import (
    ComparisonError,
    NothingInCommon,
    compare_runs,
    outcome_matrices,
    paired_tests,
    scored_outcomes,
    set_aside_steering,
    shared_keys,
    unshared_notes,
)
from gapscope.analysis.logs import RunInfo
from gapscope.analysis.profile import GapRow
from gapscope.analysis.spec import LoadedLog, LogReader
from gapscope.analysis.view import View


@dataclass
class Outcomes:
    """A summary that is only its per-item outcomes (what compare reads)."""

    items: dict[str, dict[str, bool]]
    model: str = "m"

    def rows(self) -> list[GapRow]:
        return [GapRow.share(self.model, "D", metric, 1, 2, "x.eval") for metric in self.items]

    def outcomes(self) -> dict[str, dict[str, bool]]:
        return self.items


def _no_view(summary: Any, options: Any) -> View:
    raise AssertionError("compare shows no view")


READER = LogReader("d_task", "D", lambda log: Outcomes({}), _no_view)
INFO = RunInfo("d_task", "m", {}, {}, "success", "x.eval", None, None)


def _log(items: dict[str, dict[str, bool]], model: str = "m", **task_args: Any) -> LoadedLog:
    info = replace(INFO, model=model, task_args=task_args)
    return LoadedLog(Path(f"{model}.eval"), READER, Outcomes(items, model), info)


def test_steering_runs_are_set_aside_with_a_count() -> None:
    plain, steered = _log({"acc": {"i": True}}), _log({"acc": {"i": True}}, steer="d", alpha=4)
    kept, notes = set_aside_steering("A", [plain, steered])
    assert kept == [plain]
    assert notes == ["A: 1 steering runs left out (their dosage curves are in gapscope report)"]
    assert set_aside_steering("B", [plain]) == ([plain], [])


def test_a_side_with_no_scored_item_is_refused() -> None:
    assert scored_outcomes("A", [_log({"acc": {"i": True}})]) == {("D", "acc"): {"i": True}}
    with pytest.raises(ComparisonError, match="no scored items on side B"):
        scored_outcomes("B", [_log({"acc": {}})])


def test_shared_keys_keep_a_order_and_nothing_shared_is_its_own_error() -> None:
    a = {("D", "x"): {"i": True}, ("D", "y"): {"i": True}}
    b = {("D", "y"): {"i": True}, ("D", "x"): {"i": False}, ("D", "z"): {"i": True}}
    assert shared_keys(a, b) == [("D", "x"), ("D", "y")]
    with pytest.raises(NothingInCommon, match=r"A: \['x', 'y'\]; B: \['w'\]"):
        shared_keys(a, {("D", "w"): {"i": True}})


def test_keys_one_side_has_are_one_note_per_side() -> None:
    a = {("D", "x"): {}, ("D", "a1"): {}, ("D", "a2"): {}}
    b = {("D", "x"): {}, ("D", "b1"): {}}
    assert unshared_notes(a, b, [("D", "x")]) == [
        "only in A, not compared (2): D a1; D a2",
        "only in B, not compared (1): D b1",
    ]
    assert unshared_notes(a, a, list(a)) == []


def test_paired_tests_are_mcnemar_on_paired_items_with_holm_across_keys() -> None:
    key_x, key_y = ("D", "x"), ("D", "y")
    items = [f"i{n}" for n in range(8)]
    # x: A solves all 8, B the first 2 -> 6 discordant, all for A: p = 2 / 2^6
    a = {key_x: dict.fromkeys(items, True), key_y: dict.fromkeys(items, True)}
    b = {key_x: {i: n < 2 for n, i in enumerate(items)}, key_y: dict.fromkeys(items, True)}
    notes: list[str] = []
    x, y = paired_tests([key_x, key_y], a, b, False, notes, np.random.default_rng(0), 200)
    assert (x.mcnemar.n, x.mcnemar.b, x.mcnemar.c) == (8, 6, 0)
    assert x.mcnemar.p_value == pytest.approx(2 / 64)
    assert x.p_holm == pytest.approx(min(1.0, 2 * 2 / 64))  # two keys tested
    assert y.mcnemar.p_value == 1.0 and x.difference.estimate == pytest.approx(0.75)
    assert notes == []


def test_paired_tests_refuse_differing_items_unless_intersecting() -> None:
    a = {("D", "x"): {"i": True, "j": False}}
    b = {("D", "x"): {"i": False, "k": True}}
    rng = np.random.default_rng(0)
    with pytest.raises(ComparisonError, match="1 items only in A, 1 only in B, 1 in both"):
        paired_tests([("D", "x")], a, b, False, [], rng, 100)
    notes: list[str] = []
    (only,) = paired_tests([("D", "x")], a, b, True, notes, rng, 100)
    assert only.mcnemar.n == 1 and "compared on the common items only" in notes[0]


def test_outcome_matrices_come_from_the_specs_that_have_them() -> None:
    assert outcome_matrices([_log({"acc": {"i": True}})], [_log({"acc": {"i": True}})]) == {}


def test_compare_runs_is_its_steps_in_order() -> None:
    a = [
        _log({"x": {"i": True, "j": True}, "a1": {"i": True}}, "ma"),
        _log({}, "ma", steer="d", alpha=2),
    ]
    b = [_log({"x": {"i": False, "j": True}}, "mb")]
    result = compare_runs(a, b, loading_notes=["loaded"], n_resamples=100)
    assert result.notes == [
        "loaded",
        "A: 1 steering runs left out (their dosage curves are in gapscope report)",
        "only in A, not compared (1): D a1",
    ]
    (metric,) = result.metrics
    assert (metric.metric, metric.mcnemar.b, metric.mcnemar.c) == ("x", 1, 0)
    assert (result.a, result.b) == ("ma", "mb")
