"""Probe prompts: Stage 0, the help ladder C1/C2/C3, and the three matched controls.

Every prompt is built from the family and a seed only, so a run can be re-created exactly.
The roadmap lists the tested milestones (INTEGRATE stays private, seed Section 2); C2 never
shows a milestone answer, C3 shows the gold answers. Controls replace the matched information
and nothing else: C2-random shows another family's milestones, as many as the target has (so
the roadmap's length is not what differs); C2-generic a generic decomposition instruction;
C3-mismatched the correct roadmap with answers drawn from other families' milestones, none of
them equivalent to the true answer it replaces (else the "wrong" answer would be the oracle).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from gapscope.ladder.families import Family, Milestone
from gapscope.ladder.schema import AnswerSchema
from gapscope.templates import Templates

template = Templates(Path(__file__).parent / "prompts")

Same = Callable[[str, str], bool]
"""Whether two bare answers are equivalent (default: the verifier's ``equivalent``)."""

PAPER_MAX_TOKENS = 16384
"""Tokens per rollout the paper gives every probe and Stage 0 (seed Section 3; Appendix L
shows that 4K instead of 16K reorders models)."""


class Condition(StrEnum):
    """What help a probe gives. S0 is a milestone asked alone."""

    C1 = "C1"
    C2 = "C2"
    C3 = "C3"
    C2_RANDOM = "C2-random"
    C2_GENERIC = "C2-generic"
    C3_MISMATCHED = "C3-mismatched"
    S0 = "S0"


LADDER: tuple[Condition, ...] = (Condition.C1, Condition.C2, Condition.C3)
CONTROLS: tuple[Condition, ...] = (
    Condition.C2_RANDOM,
    Condition.C2_GENERIC,
    Condition.C3_MISMATCHED,
)
ALL_CONDITIONS: tuple[Condition, ...] = (*LADDER, *CONTROLS, Condition.S0)


@dataclass(frozen=True)
class Probe:
    """One prompt to roll out k times, and the gold answer its rollouts are graded against.

    ``donors`` names the families whose milestones or answers a control borrowed.
    """

    pid: str
    condition: Condition
    prompt: str
    gold: str
    schema: AnswerSchema | None
    milestone_index: int | None = None
    donors: tuple[str, ...] = ()

    @property
    def sample_id(self) -> str:
        suffix = f":{self.milestone_index}" if self.milestone_index is not None else ""
        return f"{self.pid}:{self.condition.value}{suffix}"


def family_of(sample_id: str) -> str:
    """The pid in a probe's sample id (``pid:C1``, ``pid:S0:2``): a log lists the ids of every
    sample it was to run, so the families a stopped run left unfinished can be named."""
    head, _, last = sample_id.rpartition(":")
    return head.rpartition(":")[0] if last.isdigit() else head


def _roadmap(milestones: Sequence[Milestone], answers: Sequence[str] | None = None) -> str:
    if answers is None:
        return "\n".join(
            template("roadmap_item").format(number=i + 1, description=m.description)
            for i, m in enumerate(milestones)
        )
    return "\n".join(
        template("roadmap_item_answer").format(number=i + 1, description=m.description, answer=a)
        for i, (m, a) in enumerate(zip(milestones, answers, strict=True))
    )


def _parent(family: Family, condition: Condition, text: str, donors: Sequence[str] = ()) -> Probe:
    return Probe(
        pid=family.pid,
        condition=condition,
        prompt=text,
        gold=family.gold_answer,
        schema=family.parent_schema,
        donors=tuple(donors),
    )


def stage0_probes(family: Family) -> list[Probe]:
    """Every tested milestone alone, with its own standalone prompt."""
    return [
        Probe(
            pid=family.pid,
            condition=Condition.S0,
            prompt=m.prompt,
            gold=m.answer,
            schema=m.schema,
            milestone_index=i,
        )
        for i, m in enumerate(family.tested_milestones)
    ]


def parent_probes(
    family: Family,
    others: Sequence[Family],
    conditions: Sequence[Condition] = ALL_CONDITIONS,
    seed: int = 0,
    same: Same | None = None,
) -> list[Probe]:
    """The parent-problem probes of ``family``; ``others`` supply the controls' material.

    ``same`` decides whether a borrowed answer equals the true one (C3-mismatched skips it).
    """
    rng = random.Random(f"ladder-controls:{seed}:{family.pid}")
    problem = family.parent_prompt
    tested = family.tested_milestones
    donors = [f for f in others if f.pid != family.pid and f.tested_milestones]
    probes: list[Probe] = []
    for condition in conditions:
        if condition is Condition.C1:
            probes.append(_parent(family, condition, template("c1_direct").format(problem=problem)))
        elif condition is Condition.C2:
            text = template("c2_roadmap").format(problem=problem, roadmap=_roadmap(tested))
            probes.append(_parent(family, condition, text))
        elif condition is Condition.C3:
            roadmap = _roadmap(tested, [m.answer for m in tested])
            text = template("c3_answers").format(problem=problem, roadmap=roadmap)
            probes.append(_parent(family, condition, text))
        elif condition is Condition.C2_GENERIC:
            text = template("c2_generic").format(problem=problem)
            probes.append(_parent(family, condition, text))
        elif condition is Condition.C2_RANDOM:
            borrowed, pids = random_roadmap(len(tested), donors, rng)
            text = template("c2_roadmap").format(problem=problem, roadmap=_roadmap(borrowed))
            probes.append(_parent(family, condition, text, pids))
        elif condition is Condition.C3_MISMATCHED:
            answers, pids = mismatched_answers(family, donors, rng, same or _verifier_same())
            text = template("c3_answers").format(problem=problem, roadmap=_roadmap(tested, answers))
            probes.append(_parent(family, condition, text, pids))
    return probes


def random_roadmap(
    count: int, donors: Sequence[Family], rng: random.Random
) -> tuple[list[Milestone], list[str]]:
    """``count`` milestones of another family, and the donor pid of each.

    One donor with exactly ``count`` tested milestones when one exists (the paper's control);
    otherwise ``count`` milestones drawn from all donors, so the length still matches.
    """
    _need(donors, Condition.C2_RANDOM)
    exact = [d for d in donors if len(d.tested_milestones) == count]
    if exact:
        donor = rng.choice(exact)
        return list(donor.tested_milestones), [donor.pid] * count
    pool = [(d.pid, m) for d in donors for m in d.tested_milestones]
    if len(pool) < count:
        raise ValueError(
            f"control {Condition.C2_RANDOM.value} needs {count} milestones from other families, "
            f"only {len(pool)} exist"
        )
    picks = rng.sample(pool, count)
    return [m for _, m in picks], [pid for pid, _ in picks]


def mismatched_answers(
    family: Family, donors: Sequence[Family], rng: random.Random, same: Same
) -> tuple[list[str], list[str]]:
    """One answer per tested milestone, borrowed from another family's milestones and never
    equivalent to that milestone's gold answer (nor to the parent answer); with donor pids."""
    _need(donors, Condition.C3_MISMATCHED)
    pool = [(d.pid, m.answer) for d in donors for m in d.tested_milestones]
    answers: list[str] = []
    pids: list[str] = []
    for milestone in family.tested_milestones:
        order = rng.sample(pool, len(pool))
        pick = next(
            (
                (pid, answer)
                for pid, answer in order
                if not same(answer, milestone.answer) and not same(answer, family.gold_answer)
            ),
            None,
        )
        if pick is None:
            raise ValueError(
                f"control {Condition.C3_MISMATCHED.value}: no other family's milestone answer "
                f"differs from {milestone.answer!r} (family {family.pid})"
            )
        pids.append(pick[0])
        answers.append(pick[1])
    return answers, pids


def _verifier_same() -> Same:
    """Equivalence by the verifier, asked only for answers of the same shape: answers whose
    inferred schemas differ (a tuple and an equation) are not equal, and telling so by sympy
    costs up to seconds per pair."""
    from gapscope.verify import equivalent, infer_schema

    def same(answer: str, gold: str) -> bool:
        if answer.strip() == gold.strip():
            return True
        return infer_schema(answer) == infer_schema(gold) and equivalent(answer, gold)

    return same


def _need(donors: Sequence[Family], condition: Condition) -> Sequence[Family]:
    if not donors:
        raise ValueError(
            f"control {condition.value} needs at least one other family with tested milestones"
        )
    return donors


def build_probes(
    families: Sequence[Family],
    conditions: Sequence[Condition] = ALL_CONDITIONS,
    seed: int = 0,
    same: Same | None = None,
) -> list[Probe]:
    """All probes of a family set, parent probes first then Stage 0, family by family."""
    probes: list[Probe] = []
    parent_conditions = [c for c in conditions if c is not Condition.S0]
    for family in families:
        probes.extend(parent_probes(family, families, parent_conditions, seed, same))
        if Condition.S0 in conditions:
            probes.extend(stage0_probes(family))
    return probes
