"""The rubric review of composition-gap families: cases, the judge's prompt, its labels.

A composition-gap family (every milestone solved alone, the parent failed at every help level)
is the paper's headline, and also where grading artifacts collect: a correct answer the
verifier could not match, a wrong gold. The paper has an LLM review every such family against
a rubric (seed Section 4.5, Appendix S) and reports the category share before and after the
flagged families are removed. Here a case is one (student model, family) with what the student
was given under C3 and its C3 attempts; a judge flags the rubric's categories and the family's
one label is the first flagged category in :data:`PRIORITY` (docs/ladder.md says why).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from gapscope.ladder.probes import template
from gapscope.params import choices


class ReviewLabel(StrEnum):
    """The rubric's mutually exclusive categories (after the priority rule)."""

    VERIFIER_FORMAT = "verifier-format"
    DEFECTIVE_REFERENCE = "defective-reference"
    ROADMAP_OMISSION = "roadmap-omission"
    GENUINE = "genuine-composition"


PRIORITY: tuple[ReviewLabel, ...] = (
    ReviewLabel.VERIFIER_FORMAT,
    ReviewLabel.DEFECTIVE_REFERENCE,
    ReviewLabel.ROADMAP_OMISSION,
    ReviewLabel.GENUINE,
)
"""Which flag names the family when the judge flags several: the first one here.

A grading artifact voids the evidence whatever else holds (an accepted-looking answer was
never wrong), a wrong gold voids it next; a missing roadmap step turns the failure into a
planning gap; "genuine" is the residue, claimed only when nothing above explains the failure.
"""

GRADING: frozenset[ReviewLabel] = frozenset(
    {ReviewLabel.VERIFIER_FORMAT, ReviewLabel.DEFECTIVE_REFERENCE}
)
"""The labels that flag a family as a grading error (removed from the category by default)."""


def label_of(flags: Iterable[ReviewLabel]) -> ReviewLabel:
    """The one label of a family the judge flagged with ``flags`` (the priority rule)."""
    flagged = set(flags)
    for label in PRIORITY:
        if label in flagged:
            return label
    raise ValueError("no category flagged")


@dataclass(frozen=True)
class JudgeVerdict:
    """What a judge said about one case: every category it flagged, in priority order."""

    flags: tuple[ReviewLabel, ...]
    rationale: str

    @property
    def label(self) -> ReviewLabel:
        return label_of(self.flags)


_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def parse_verdict(reply: str) -> JudgeVerdict:
    """The judge's JSON reply read back; ValueError naming what is wrong with it.

    The object may sit inside a code fence or after some prose (judges add both); unknown
    category names are an error rather than dropped, so a judge answering off-rubric is seen.
    """
    match = _JSON_OBJECT.search(reply)
    if match is None:
        raise ValueError("the judge's reply holds no JSON object")
    try:
        data = json.loads(match.group(0))
    except json.JSONDecodeError as exc:
        raise ValueError(f"the judge's reply is not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict) or not isinstance(data.get("flags"), list):
        raise ValueError('the judge\'s reply has no "flags" list')
    names = [str(f).strip().lower() for f in data["flags"]]
    valid = {label.value: label for label in ReviewLabel}
    unknown = [n for n in names if n not in valid]
    if unknown:
        raise ValueError(f"unknown categories {unknown}; the rubric has {', '.join(valid)}")
    if not names:
        raise ValueError("the judge flagged no category")
    flagged = {valid[n] for n in names}
    return JudgeVerdict(
        flags=tuple(label for label in PRIORITY if label in flagged),
        rationale=str(data.get("rationale", "")),
    )


@dataclass(frozen=True)
class Attempt:
    """One C3 rollout: the student's text, the answer the grader extracted and its verdict."""

    text: str
    answer: str | None
    verdict: str


@dataclass(frozen=True)
class ReviewCase:
    """One student's composition-gap family, with everything the judge is shown.

    ``given`` is the C3 user turn as the student read it (the problem, the roadmap and each
    milestone's gold answer), taken from the log so the judge sees exactly that.
    """

    model: str
    pid: str
    given: str
    gold: str
    milestone_golds: tuple[str, ...]
    attempts: tuple[Attempt, ...]

    @property
    def case_id(self) -> str:
        return f"{self.model}::{self.pid}"


@dataclass(frozen=True)
class ModelTotals:
    """The denominators a share needs: a student's families and composition-gap count."""

    n_families: int
    composition: int
    log: str


@dataclass(frozen=True)
class ReviewSet:
    """Every case of a review and each reviewed student's totals (one JSON file)."""

    models: dict[str, ModelTotals]
    cases: list[ReviewCase] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps(
            {
                "models": {name: asdict(t) for name, t in self.models.items()},
                "cases": [asdict(c) for c in self.cases],
            },
            ensure_ascii=False,
            indent=1,
        )


def load_review_set(path: str | Path) -> ReviewSet:
    """Read a review set written by :meth:`ReviewSet.to_json`; ValueError naming the field."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        models = {
            str(name): ModelTotals(int(t["n_families"]), int(t["composition"]), str(t["log"]))
            for name, t in data["models"].items()
        }
        cases = [_case(c) for c in data["cases"]]
    except FileNotFoundError:
        raise ValueError(f"{path}: no such review-cases file") from None
    except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"{path}: not a review-cases file ({type(exc).__name__}: {exc})") from None
    missing = sorted({c.model for c in cases} - set(models))
    if missing:
        raise ValueError(f"{path}: cases of students without totals: {missing}")
    return ReviewSet(models, cases)


def _case(record: Mapping[str, Any]) -> ReviewCase:
    return ReviewCase(
        model=str(record["model"]),
        pid=str(record["pid"]),
        given=str(record["given"]),
        gold=str(record["gold"]),
        milestone_golds=tuple(str(g) for g in record["milestone_golds"]),
        attempts=tuple(
            Attempt(str(a["text"]), _optional(a["answer"]), str(a["verdict"]))
            for a in record["attempts"]
        ),
    )


def _optional(value: object) -> str | None:
    return None if value is None else str(value)


def render_case(case: ReviewCase, max_attempts: int = 8, max_attempt_chars: int = 4000) -> str:
    """The judge's user turn for ``case``.

    An attempt longer than ``max_attempt_chars`` keeps its end: the final answer and the steps
    just before it are what the rubric is about, the opening restates the problem.
    """
    if max_attempts < 1 or max_attempt_chars < 1:
        raise ValueError("max_attempts and max_attempt_chars must be at least 1")
    shown = case.attempts[:max_attempts]
    attempts = "\n".join(
        template("review_attempt").format(
            number=i + 1,
            answer=a.answer if a.answer is not None else "(none)",
            verdict=a.verdict,
            text=_tail(a.text, max_attempt_chars),
        )
        for i, a in enumerate(shown)
    )
    return template("review_case").format(
        model=case.model,
        pid=case.pid,
        given=case.given,
        gold=case.gold,
        milestone_golds="; ".join(case.milestone_golds) or "(none)",
        shown=len(shown),
        total=len(case.attempts),
        attempts=attempts or "(no attempt was logged)",
    )


def _tail(text: str, limit: int) -> str:
    return text if len(text) <= limit else "[... cut ...]" + text[-limit:]


@dataclass(frozen=True)
class ModelReview:
    """One student's composition-gap share before and after removing flagged families.

    The flagged families leave the category, not the family set: the paper's "33-48 %, and
    24-37 % after removing" is the same denominator (48 % x (1 - 0.22) = 37 %).
    ``unlabelled`` counts cases the judge gave no usable verdict on; they stay in the category.
    """

    n_families: int
    composition: int
    reviewed: int
    flagged: int
    unlabelled: int
    labels: dict[ReviewLabel, int]

    @property
    def share_before(self) -> float:
        return self.composition / self.n_families if self.n_families else 0.0

    @property
    def share_after(self) -> float:
        return (self.composition - self.flagged) / self.n_families if self.n_families else 0.0

    @property
    def flag_rate(self) -> float | None:
        """Flagged share of the reviewed composition-gap families (None when none was)."""
        labelled = self.reviewed - self.unlabelled
        return self.flagged / labelled if labelled else None


def model_review(
    totals: ModelTotals,
    labels: Sequence[ReviewLabel | None],
    removed: frozenset[ReviewLabel] = GRADING,
) -> ModelReview:
    """One student's review from its totals and one label (None: unparsed) per case."""
    counts = dict.fromkeys(PRIORITY, 0)
    for label in labels:
        if label is not None:
            counts[label] += 1
    return ModelReview(
        n_families=totals.n_families,
        composition=totals.composition,
        reviewed=len(labels),
        flagged=sum(counts[label] for label in removed),
        unlabelled=sum(label is None for label in labels),
        labels=counts,
    )


def parse_removed(spec: str) -> frozenset[ReviewLabel]:
    """A comma list of categories (the ``--remove`` option); ValueError naming the choices."""
    return frozenset(choices("categories", spec, ReviewLabel))
