"""A share row: k of n as a percentage with the Wilson 95 % interval, as tables print it."""

from __future__ import annotations

from gapscope.analysis.profile import GapRow


def test_a_share_row_is_a_percentage_with_its_wilson_interval() -> None:
    row = GapRow.share("m", "OracleLadder", "outcome A", 3, 10, "run.eval", status="error")
    assert row.value == 30.0
    assert row.cell() == "30.0 [10.8, 60.3] (n=10)"  # Wilson 95 % for 3 of 10
    assert (row.model, row.metric, row.log, row.status) == ("m", "outcome A", "run.eval", "error")
