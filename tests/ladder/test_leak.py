"""Leak check: equivalent and trivially transformed milestone answers are flagged."""

from __future__ import annotations

import time

import pytest

from gapscope.ladder.families import Family, Milestone
from gapscope.ladder.leak import (
    GuardedTransform,
    LeakKind,
    check_family,
    check_leaks,
    trivial_transform,
)
from gapscope.ladder.schema import AnswerSchema, MilestoneType


def same_string(answer: str, gold: str, schema: AnswerSchema | None = None) -> bool:
    """A strict stand-in for the verifier, so these tests exercise the transforms alone."""
    return answer.replace(" ", "") == gold.replace(" ", "")


def make_family(
    parent: str,
    *answers: str,
    integrate: str | None = None,
    invalid: tuple[int, ...] = (),
    schema: AnswerSchema | None = None,
) -> Family:
    milestones = [
        Milestone(prompt=f"step {i}", answer=a, type=MilestoneType.COMPUTE, description=f"s{i}")
        for i, a in enumerate(answers)
    ]
    if integrate is not None:
        milestones.append(
            Milestone(
                prompt="last", answer=integrate, type=MilestoneType.INTEGRATE, description="last"
            )
        )
    return Family(
        pid="fam",
        parent_prompt="Problem",
        parent_answer=parent,
        milestones=tuple(milestones),
        parent_schema=schema,
        milestone_gold_invalid=invalid,
    )


@pytest.mark.parametrize(
    ("answer", "parent", "transform"),
    [
        ("-\\frac{3}{4}", "\\frac{3}{4}", "negation"),
        ("-2x-1", "2x+1", "negation"),
        ("\\frac{4}{3}", "\\frac{3}{4}", "reciprocal"),
        ("8", "7", "plus one"),
        ("6", "7", "minus one"),
        ("n", "n+1", "minus one"),
        ("2\\sqrt{2}", "\\sqrt{2}", "double"),
        ("\\frac{\\sqrt{3}}{2}", "\\sqrt{3}", "half"),
        ("5", "\\sqrt{5}", "square"),
        ("x^2", "x", "square"),
        ("7", "49", "square root"),
        ("-7", "49", "square root"),
        ("35", "0.35", "fraction to percent"),
        ("0.35", "35", "percent to fraction"),
        ("25\\%", "\\frac{1}{4}", "same value"),
        ("x - 2", "y = x - 2", "same value"),
        ("125", "12.5", "same digits"),
        ("1\\,250\\text{ cm}", "12.50", "same digits"),
    ],
)
def test_each_trivial_transform_is_named(answer: str, parent: str, transform: str) -> None:
    assert trivial_transform(answer, parent) == transform


@pytest.mark.parametrize(
    ("answer", "parent"),
    [
        ("5", "7"),
        ("\\frac{2}{3}", "\\frac{3}{4}"),
        ("x^3", "x"),
        ("2^{3}", "23"),
        ("21", "12"),
        ("\\{1, 2\\}", "\\{2, 3\\}"),
        ("(3, 4)", "7"),
        ("\\begin{pmatrix}1\\\\2\\end{pmatrix}", "2"),
        ("m - 4", "m > 4"),
        ("not a formula {", "3"),
        ("\\sum_{k=1}^{n} k", "\\frac{n(n+1)}{2}"),  # left to the verifier
    ],
)
def test_unrelated_answers_are_not_trivial(answer: str, parent: str) -> None:
    assert trivial_transform(answer, parent) is None


def test_equivalent_answer_is_flagged_once_with_the_parent_schema() -> None:
    calls: list[tuple[str, str, AnswerSchema | None]] = []

    def recording(answer: str, gold: str, schema: AnswerSchema | None = None) -> bool:
        calls.append((answer, gold, schema))
        return answer == "1.5"

    fam = make_family("\\frac{3}{2}", "1.5", "4", schema=AnswerSchema.NUMBER)
    (flag,) = check_family(fam, recording)
    assert (flag.pid, flag.milestone_index, flag.kind) == ("fam", 0, LeakKind.EQUIVALENT)
    assert "1.5" in flag.detail
    assert calls == [
        ("1.5", "\\frac{3}{2}", AnswerSchema.NUMBER),
        ("4", "\\frac{3}{2}", AnswerSchema.NUMBER),
    ]


def test_trivial_flag_carries_the_transform_and_index() -> None:
    (flag,) = check_family(make_family("12", "5", "-12"), same_string)
    assert (flag.milestone_index, flag.kind) == (1, LeakKind.TRIVIAL_TRANSFORM)
    assert flag.detail.startswith("negation")


def test_corrected_parent_answer_is_the_one_checked() -> None:
    fam = make_family("10", "11")
    corrected = Family(
        pid=fam.pid,
        parent_prompt=fam.parent_prompt,
        parent_answer="10",
        milestones=fam.milestones,
        parent_answer_corrected="3",
    )
    assert len(check_family(fam, same_string)) == 1
    assert check_family(corrected, same_string) == []


def test_integrate_is_withheld_and_listed_separately() -> None:
    fam = make_family("12", "5", integrate="12")
    report = check_leaks([fam], same_string)
    assert report.flags == ()
    assert report.withheld == (("fam", 1),)


def test_milestones_with_invalid_gold_are_not_checked() -> None:
    fam = make_family("12", "12", "5", invalid=(0,))
    assert check_family(fam, same_string) == []


def test_report_counts_by_kind() -> None:
    families = [make_family("12", "12", "-12"), make_family("3", "9", integrate="3")]
    report = check_leaks(families, same_string)
    assert report.by_kind() == {LeakKind.EQUIVALENT: 1, LeakKind.TRIVIAL_TRANSFORM: 2}
    assert report.flagged_pids() == {"fam"}


def test_default_equivalence_is_the_verifier() -> None:
    fam = make_family("\\frac{3}{2}", "1.5", "4")
    (flag,) = check_family(fam)
    assert flag.kind is LeakKind.EQUIVALENT


def test_a_transform_check_that_never_ends_is_flagged_undecided_in_time() -> None:
    # sympy never finishes evaluating this tower; unguarded, the check hung the caller
    family = make_family("2", "9^{9^{9^{9}}}", "5")
    guarded = GuardedTransform(timeout_s=3.0)
    try:
        started = time.monotonic()
        flags = check_family(family, same_string, guarded)
        assert time.monotonic() - started < 30
    finally:
        guarded.close()
    assert [(f.milestone_index, f.kind) for f in flags] == [(0, LeakKind.UNDECIDED)]
    assert "ran out of time" in flags[0].detail


def test_the_guarded_transform_gives_the_same_answers() -> None:
    guarded = GuardedTransform()
    try:
        assert guarded("8", "7") == "plus one"
        assert guarded("3", "7") is None
    finally:
        guarded.close()
