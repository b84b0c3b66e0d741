"""A scored sample goes into a log and comes back the same, by its field names alone."""

from __future__ import annotations

import json

from gapscope.t2.contract import ScoredSample

UNSCORED = ScoredSample("r1", "nl+st", "server_error", False, False, False, None, 3, True, 2)
"""What an unscored sample of record r1 counts as (its own metadata, no verdict)."""


def test_a_scored_sample_survives_the_json_log_unchanged() -> None:
    scored = ScoredSample(
        "r1", "nl+st", "checked", True, True, False, 0.5, 4, True, 2, 81.0, 77.5, False,
        ("lean_error", "compiles"), 1, True, None,
    )  # fmt: skip
    logged = json.loads(json.dumps(scored.to_metadata()))
    assert logged["refine_trail"] == ["lean_error", "compiles"]
    back = ScoredSample.from_metadata({**logged, "detail": "kept for readers"}, UNSCORED)
    assert back == scored and back.first_compiles is False


def test_a_field_the_log_lacks_keeps_the_unscored_value() -> None:
    """A log written before ``hard``, ``rows``, the BLEUs and refinement existed."""
    old = {"record": "r1", "context": "nl+st", "outcome": "checked", "compiles": True, "ta": True}
    back = ScoredSample.from_metadata(old, UNSCORED)
    assert (back.outcome, back.compiles, back.ta, back.ta_strict) == ("checked", True, True, False)
    assert (back.successors, back.hard, back.rows, back.bleu) == (3, True, 2, None)
    assert (back.refine_trail, back.first_compiles) == ((), None)
