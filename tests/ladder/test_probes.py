"""What each probe shows the model: C3 the gold answers, C2 never; controls borrow elsewhere."""

from __future__ import annotations

import random

import pytest

from gapscope.ladder.families import Family, Milestone, load_bundled
from gapscope.ladder.probes import (
    ALL_CONDITIONS,
    CONTROLS,
    Condition,
    Probe,
    build_probes,
    mismatched_answers,
    parent_probes,
    random_roadmap,
    stage0_probes,
    template,
)
from gapscope.ladder.schema import MilestoneType


@pytest.fixture(scope="module")
def families() -> list[Family]:
    result = load_bundled()
    assert not result.problems
    return result.families


def _by(probes: list[Probe], condition: Condition) -> Probe:
    return next(p for p in probes if p.condition is condition)


def test_c3_lists_every_gold_answer_and_c2_lists_none(families: list[Family]) -> None:
    for family in families:
        probes = parent_probes(family, families)
        c2, c3 = _by(probes, Condition.C2), _by(probes, Condition.C3)
        for i, m in enumerate(family.tested_milestones):
            assert f"{i + 1}. {m.description}" in c2.prompt
            assert f"Answer: {m.answer}" in c3.prompt
        assert "Answer:" not in c2.prompt
        # C2 and C3 share the problem and the roadmap; C3 only adds answers
        assert c2.prompt.split("A roadmap")[0] == c3.prompt.split("A roadmap")[0]
        for probe in probes:
            assert probe.gold == family.gold_answer
            assert family.parent_prompt in probe.prompt


def test_integrate_milestones_stay_private(families: list[Family]) -> None:
    for family in families:
        integrate = [m for m in family.milestones if m.type is MilestoneType.INTEGRATE]
        probes = build_probes([family, *families[:2]], ALL_CONDITIONS)
        for m in integrate:
            assert all(m.description not in p.prompt for p in probes if p.pid == family.pid)
            assert all(m.prompt != p.prompt for p in probes)


def test_controls_borrow_from_other_families(families: list[Family]) -> None:
    descriptions = {f.pid: {m.description for m in f.tested_milestones} for f in families}
    answers = {f.pid: {m.answer for m in f.tested_milestones} for f in families}
    for family in families:
        probes = parent_probes(family, families, CONTROLS, seed=3)
        rand = _by(probes, Condition.C2_RANDOM)
        assert len(rand.donors) == len(family.tested_milestones)  # same roadmap length
        assert family.pid not in rand.donors
        assert not any(d in rand.prompt for d in descriptions[family.pid])
        assert "Answer:" not in rand.prompt

        generic = _by(probes, Condition.C2_GENERIC)
        assert not any(d in generic.prompt for d in descriptions[family.pid])
        assert "intermediate milestones" in generic.prompt

        mismatched = _by(probes, Condition.C3_MISMATCHED)
        assert len(mismatched.donors) == len(family.tested_milestones)
        assert family.pid not in mismatched.donors
        for m, donor_pid in zip(family.tested_milestones, mismatched.donors, strict=True):
            assert f"{m.description}\n   Answer: " in mismatched.prompt
            shown = mismatched.prompt.split(f"{m.description}\n   Answer: ")[1].split("\n")[0]
            assert shown in answers[donor_pid]


def test_controls_are_deterministic_per_seed(families: list[Family]) -> None:
    a = build_probes(families, CONTROLS, seed=1)
    assert a == build_probes(families, CONTROLS, seed=1)
    assert a != build_probes(families, CONTROLS, seed=2)


def test_stage0_asks_each_tested_milestone_alone(families: list[Family]) -> None:
    family = families[0]
    probes = stage0_probes(family)
    assert [p.milestone_index for p in probes] == list(range(len(family.tested_milestones)))
    for p, m in zip(probes, family.tested_milestones, strict=True):
        assert p.prompt == m.prompt and p.gold == m.answer and p.schema == m.schema
        assert p.sample_id == f"{family.pid}:S0:{p.milestone_index}"


def test_controls_need_another_family(families: list[Family]) -> None:
    with pytest.raises(ValueError, match="C2-random needs at least one other family"):
        parent_probes(families[0], [families[0]], [Condition.C2_RANDOM])
    # the help ladder alone works on a single family
    assert len(parent_probes(families[0], [], [Condition.C1, Condition.C2, Condition.C3])) == 3


def _family(pid: str, answers: list[str], parent: str = "100") -> Family:
    milestones = tuple(
        Milestone(f"{pid} step {i}?", a, MilestoneType.COMPUTE, f"{pid} step {i}")
        for i, a in enumerate(answers)
    )
    return Family(pid, f"{pid} problem", parent, milestones)


def _exact(a: str, b: str) -> bool:
    return a == b


def test_c2_random_borrows_a_roadmap_of_the_same_length(families: list[Family]) -> None:
    two = _family("two", ["1", "2"])
    three = _family("three", ["3", "4", "5"])
    others = [_family("other3", ["6", "7", "8"]), _family("other2", ["9", "10"])]
    for target, donor in ((two, "other2"), (three, "other3")):
        for seed in range(5):
            borrowed, pids = random_roadmap(len(target.milestones), others, random.Random(seed))
            assert pids == [donor] * len(target.milestones)
            assert [m.answer for m in borrowed] == [
                m.answer for m in next(o for o in others if o.pid == donor).milestones
            ]
    # no donor of that length: the milestones come from several donors, count still equal
    four = _family("four", ["1", "2", "3", "4"])
    borrowed, pids = random_roadmap(4, others, random.Random(0))
    assert len(borrowed) == 4 and set(pids) <= {"other3", "other2"}
    with pytest.raises(ValueError, match="needs 6 milestones from other families, only 5"):
        random_roadmap(6, others, random.Random(0))
    prompt = _by(parent_probes(four, others, [Condition.C2_RANDOM]), Condition.C2_RANDOM).prompt
    assert "4. " in prompt and "5. " not in prompt


def test_c3_mismatched_never_shows_the_true_answer() -> None:
    target = _family("t", ["5", "7"], parent="12")
    # every donor answer but one per milestone equals a true answer or the parent answer
    donors = [_family("d1", ["5", "7"]), _family("d2", ["12", "5"]), _family("d3", ["99"])]
    for seed in range(20):
        answers, pids = mismatched_answers(target, donors, random.Random(seed), _exact)
        assert answers[0] not in {"5", "12"} and answers[1] not in {"7", "12"}
        assert "t" not in pids
    with pytest.raises(ValueError, match="differs from '5'"):
        mismatched_answers(target, [_family("d1", ["5"]), donors[1]], random.Random(0), _exact)


def test_c3_mismatched_uses_the_verifiers_equivalence_by_default() -> None:
    target = _family("t", ["1/2"], parent="3")
    donors = [_family("d1", ["0.5"]), _family("d2", ["\\frac{2}{4}"]), _family("d3", ["4"])]
    probe = parent_probes(target, donors, [Condition.C3_MISMATCHED])[0]
    assert probe.donors == ("d3",)
    assert "Answer: 4" in probe.prompt


def test_bundled_controls_match_the_targets_count(families: list[Family]) -> None:
    probes = build_probes(families, [Condition.C2_RANDOM, Condition.C3_MISMATCHED], seed=0)
    by_pid = {f.pid: f for f in families}
    for probe in probes:
        family = by_pid[probe.pid]
        assert len(probe.donors) == len(family.tested_milestones)


def test_the_student_instruction_states_every_rule_of_the_papers() -> None:
    system = template("system")
    assert "\\boxed{}" in system  # one boxed final answer
    assert "\\frac{3}{4}" in system and "\\sqrt{2}" in system  # LaTeX answer examples
    assert "\\{1, 2\\}" in system and "[0, 1)" in system and "(2, -1)" in system
    assert "letter" in system and "\\boxed{B}" in system  # multiple-choice rule
