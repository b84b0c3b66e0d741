"""Call tests compare returned values as LiveCodeBench does (``prediction == gt_out``), on
the JSON the child sends: a Python-level ``==`` trick never reaches the judge."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gapscope.ladder.judge import CodeTest, Judge, Status
from gapscope.ladder.sandbox import Isolation, Limits, run_tests


def _verdict(expected: Any, returned: Any) -> Status:
    judge = Judge([CodeTest([0], expected)], "f")
    verdict = judge.feed(json.dumps({"i": 0, "ret": returned}).encode())
    assert verdict is not None
    return verdict.status


@pytest.mark.parametrize(
    ("expected", "returned", "status"),
    [
        (1, True, Status.PASSED),  # LiveCodeBench: True == 1
        (True, 1, Status.PASSED),
        (1, 1.0, Status.PASSED),
        (1, "1", Status.FAILED),
        (1, [1], Status.FAILED),
        (1, False, Status.FAILED),
        (2, True, Status.FAILED),
        ((1, 2), [1, 2], Status.PASSED),  # tuples as lists, as LiveCodeBench
        ({"a": [1]}, {"a": [1, 1]}, Status.FAILED),
    ],
)
def test_a_returned_value_passes_exactly_when_livecodebench_would(
    expected: Any, returned: Any, status: Status
) -> None:
    assert _verdict(expected, returned) is status


ALWAYS_EQUAL = """
class Anything:
    def __eq__(self, other):
        return True
    __hash__ = object.__hash__
def f(*args):
    return Anything()
"""
"""Equal to every expected value in-process, as LiveCodeBench's own checker would see it."""


def test_an_object_equal_to_everything_passes_nothing() -> None:
    result = run_tests(
        ALWAYS_EQUAL, [CodeTest([0], 1)], "f", Limits(time_s=5.0), Isolation.UNSANDBOXED
    )
    assert result.status is not Status.PASSED and result.passed == 0, result
