"""The stock share-correct reader: rows, outcomes, view and dosage point of a right-or-wrong
diagnostic."""

from __future__ import annotations

import pytest

from gapscope.analysis.share import ShareSummary, share_condition, share_reader, share_view

RUN = ShareSummary("parity", "accuracy", "m", "a.eval", {"1": True, "2": False, "3": True})


def test_the_row_is_the_share_correct_with_its_wilson_interval() -> None:
    [row] = RUN.rows()
    assert (row.model, row.diagnostic, row.metric, row.n, row.log) == (
        "m",
        "parity",
        "accuracy",
        3,
        "a.eval",
    )
    assert row.value == pytest.approx(200 / 3) and row.ci is not None
    assert row.ci[0] < 200 / 3 < row.ci[1]
    assert ShareSummary("parity", "accuracy", "m", "b.eval", {}).rows() == []


def test_outcomes_and_view_give_every_sample_by_id() -> None:
    assert RUN.outcomes() == {"accuracy": {"1": True, "2": False, "3": True}}
    view = share_view(RUN)
    assert view.details == {"model": "m", "metric": "accuracy", "correct": RUN.correct}
    assert view.rows == RUN.rows()


def test_a_steered_run_is_a_point_of_one_unit_per_sample() -> None:
    point = share_condition("clb", -4.0, RUN)
    assert (point.direction, point.alpha, point.incoherent) == ("clb", -4.0, 0.0)
    assert point.values == {"1": 1.0, "2": 0.0, "3": 1.0}
    empty = ShareSummary("parity", "accuracy", "m", "b.eval", {})
    with pytest.raises(ValueError, match="clb alpha=1: no sample was scored"):
        share_condition("clb", 1.0, empty)


def test_the_reader_answers_to_its_task_under_its_title() -> None:
    reader = share_reader("parity", "parity", metric="right")
    assert (reader.task, reader.name, reader.view) == ("parity", "parity", share_view)
