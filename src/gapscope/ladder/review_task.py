"""The rubric review as an Inspect task: one sample per (student, composition-gap family).

The judge is the task's model (any Inspect model string); the scorer reads its JSON reply and
applies the priority rule, so each sample's score is the family's one label and the log holds
every flag and the judge's rationale. ``gapscope ladder review`` builds the cases file from
oracle_ladder logs; ``inspect eval gapscope/ladder_review -T cases=...`` runs a saved one.
"""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig
from inspect_ai.scorer import NOANSWER, Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import TaskState, generate

from gapscope.ladder import review
from gapscope.ladder.contract import (
    REVIEW_TASK,
    ReviewCaseMetadata,
    ReviewRunMetadata,
    ReviewTotals,
    ReviewVerdictMetadata,
)
from gapscope.ladder.probes import template
from gapscope.ladder.review import GRADING, ReviewCase, load_review_set, parse_verdict, render_case
from gapscope.log_metadata import plain
from gapscope.task_version import Behaviour


def review_sample(case: ReviewCase, max_attempts: int, max_attempt_chars: int) -> Sample:
    """A case as an Inspect sample: the rubric as the system turn, the case as the user turn."""
    return Sample(
        id=case.case_id,
        input=[
            ChatMessageSystem(content=template("review_rubric")),
            ChatMessageUser(content=render_case(case, max_attempts, max_attempt_chars)),
        ],
        metadata=plain(ReviewCaseMetadata(model=case.model, pid=case.pid)),
    )


@task(name=REVIEW_TASK)
def ladder_review(
    cases: str,
    max_attempts: int = 8,
    max_attempt_chars: int = 4000,
    max_tokens: int = 2048,
) -> Task:
    """The LLM rubric review of composition-gap families.

    Args:
        cases: the review-cases JSON (``gapscope ladder review`` writes it from the logs).
        max_attempts: C3 attempts shown to the judge per family (the paper's k is 8).
        max_attempt_chars: characters kept of each attempt (its end: where the answer is).
        max_tokens: the judge's budget for its verdict.
    """
    review_set = load_review_set(cases)
    if not review_set.cases:
        raise ValueError(f"{cases}: no composition-gap family to review")
    return Task(
        version=BEHAVIOUR.version,
        dataset=MemoryDataset(
            [review_sample(c, max_attempts, max_attempt_chars) for c in review_set.cases],
            name="ladder-review",
        ),
        solver=generate(tool_calls="none"),  # no tools offered: a tool call ends the turn
        scorer=rubric_label(),
        # A review is a reading, not a sample of opinions: the judge answers greedily.
        config=GenerateConfig(max_tokens=max_tokens, temperature=0.0),
        metadata=plain(
            ReviewRunMetadata(
                cases=cases,
                models={
                    name: ReviewTotals(
                        n_families=t.n_families, composition=t.composition, log=t.log
                    )
                    for name, t in review_set.models.items()
                },
            )
        ),
    )


@metric
def grading_flag_rate() -> Metric:
    """Share of the labelled families whose label is a grading error (the paper's flag rate)."""

    def compute(scores: list[SampleScore]) -> float:
        labels = [s.score.metadata.get("label") for s in scores if s.score.metadata]
        labelled = [label for label in labels if label is not None]
        grading = {label.value for label in GRADING}
        return sum(label in grading for label in labelled) / len(labelled) if labelled else 0.0

    return compute


@scorer(metrics=[grading_flag_rate()])
def rubric_label() -> Scorer:
    """The family's label from the judge's reply; NOANSWER (with the reason) when unreadable."""

    async def score(state: TaskState, target: Target) -> Score:
        try:
            verdict = parse_verdict(state.output.completion)
        except ValueError as exc:
            return Score(
                value=NOANSWER,
                explanation=str(exc),
                metadata=plain(ReviewVerdictMetadata(flags=[], label=None, error=str(exc))),
            )
        return Score(
            value=verdict.label.value,
            answer=verdict.label.value,
            explanation=verdict.rationale,
            metadata=plain(
                ReviewVerdictMetadata(
                    flags=[f.value for f in verdict.flags], label=verdict.label.value, error=None
                )
            ),
        )

    return score


BEHAVIOUR = Behaviour(
    version=1,
    prompts=template.paths("review_rubric", "review_case", "review_attempt"),
    code=(review, review_sample, rubric_label),
)
"""What this task's version covers (:mod:`gapscope.task_version`): bump ``version`` when the
fingerprint test says the rubric, the case rendering or the scorer changed."""
