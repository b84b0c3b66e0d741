"""Faithfulness to fp32: greedy continuations compared token by token."""

from __future__ import annotations

import pytest

from gapscope.models.calibration import (
    FAITHFUL_SHARE,
    MEASURED,
    Agreement,
    agreement,
    format_note,
    shared_prefix,
)


def test_a_continuation_counts_when_its_first_tokens_equal_the_references() -> None:
    reference = [[1, 2, 3, 4], [1, 2, 3, 4], [5, 6]]
    candidate = [[1, 2, 3, 9], [1, 9, 3, 4], [5, 6, 7]]
    result = agreement(reference, candidate, tokens=3)
    # the first equals for 3 tokens; the second leaves at token 2; the third matches a
    # reference that ended after 2 tokens (it must be matched whole)
    assert (result.equal, result.total) == (2, 3)
    assert shared_prefix([1, 2, 3], [1, 2, 4]) == 2
    assert shared_prefix([1, 2], [1, 2, 3]) == 2


def test_agreement_needs_one_candidate_per_reference() -> None:
    with pytest.raises(ValueError, match="one candidate continuation per reference"):
        agreement([[1]], [[1], [2]])


def test_faithful_means_at_least_the_stated_share() -> None:
    assert Agreement(19, 20).faithful and FAITHFUL_SHARE == 0.95
    assert not Agreement(18, 20).faithful
    assert not Agreement(0, 0).faithful
    assert "19/20" in Agreement(19, 20).line() and "NOT" in Agreement(18, 20).line()


def test_only_gguf_and_fp32_are_faithful_in_the_measured_table_and_logs_say_so() -> None:
    faithful = [name for name, measured in MEASURED.items() if measured.faithful]
    assert faithful == ["gguf", "float32"]
    for name in faithful:
        assert "default" in format_note(name) and "28/28" in format_note(name)
    assert "explicit opt-in" in format_note("int8") and "NOT faithful" in format_note("int8")
    assert "not measured" in format_note("bfloat16")
