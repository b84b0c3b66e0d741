"""The rubric review, read both ways: oracle_ladder logs -> review cases, review logs -> shares.

Cases: each student's composition-gap families (the taxonomy of :mod:`gapscope.ladder`
applied to its log), each with the C3 user turn the student saw and its C3 attempts as logged.
Summary: per student, the composition-gap share before and after removing the families the
judge flagged as grading errors, the flag rate, and how often each label was given; and the
agreement (raw, Cohen's kappa) of two judges or of a judge and a human label file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from rich.console import Console
from rich.table import Table

from gapscope.analysis.ladder import model_run
from gapscope.analysis.logs import read_log, require_task, sample_score
from gapscope.analysis.profile import GapRow
from gapscope.analysis.view import View, ViewOptions
from gapscope.ladder import (
    GRADING,
    PRIORITY,
    REVIEW_TASK,
    Attempt,
    Condition,
    Gap,
    ModelReview,
    ModelTotals,
    ProbeMetadata,
    ReviewCase,
    ReviewCaseMetadata,
    ReviewLabel,
    ReviewRunMetadata,
    ReviewSet,
    ReviewVerdictMetadata,
    gap,
    model_review,
)
from gapscope.records import jsonl_rows
from gapscope.stats import cohen_kappa

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog, EvalSample

DIAGNOSTIC = "OracleLadder review"

CaseKey = tuple[str, str]
"""(student model, family pid): what one review label is about."""


def review_cases(
    logs: Sequence[EvalLog], names: Sequence[str | None], tau: int = 1, stage0_tau: int = 1
) -> ReviewSet:
    """Every composition-gap family of every student log, with its C3 material, as cases."""
    models: dict[str, ModelTotals] = {}
    cases: list[ReviewCase] = []
    for log, name in zip(logs, names, strict=True):
        run = model_run(log, name)
        if run.name in models:
            raise ValueError(f"two logs of the student {run.name!r}; name them with --names")
        composition = {f.pid for f in run.families() if gap(f, tau, stage0_tau) is Gap.COMPOSITION}
        models[run.name] = ModelTotals(len(run.tested), len(composition), run.log_location)
        cases.extend(_cases(run.name, log.samples or [], composition))
    return ReviewSet(models, cases)


def _cases(model: str, samples: Sequence[EvalSample], pids: set[str]) -> list[ReviewCase]:
    given: dict[str, str] = {}
    gold: dict[str, str] = {}
    attempts: dict[str, list[Attempt]] = {pid: [] for pid in pids}
    milestones: dict[str, dict[int, str]] = {pid: {} for pid in pids}
    for sample in samples:
        meta = cast(ProbeMetadata, sample.metadata)
        pid = str(meta["pid"])
        if pid not in pids:
            continue
        condition = Condition(meta["condition"])
        if condition is Condition.S0 and meta["milestone_index"] is not None:
            milestones[pid][int(meta["milestone_index"])] = str(sample.target)
        elif condition is Condition.C3:
            score = sample_score(sample)
            given[pid] = _user_turn(sample)
            gold[pid] = str(sample.target)
            attempts[pid].append(
                Attempt(
                    text=sample.output.completion,
                    answer=score.answer if score else None,
                    verdict=str(score.explanation) if score and score.explanation else "ungraded",
                )
            )
    missing = sorted(pids - set(given))
    if missing:
        raise ValueError(f"{model}: no C3 rollout logged for composition-gap families {missing}")
    return [
        ReviewCase(
            model=model,
            pid=pid,
            given=given[pid],
            gold=gold[pid],
            milestone_golds=tuple(milestones[pid][i] for i in sorted(milestones[pid])),
            attempts=tuple(attempts[pid]),
        )
        for pid in sorted(pids)
    ]


def _user_turn(sample: EvalSample) -> str:
    if isinstance(sample.input, str):
        return sample.input
    return sample.input[-1].text


@dataclass(frozen=True)
class ReviewSummary:
    """One review log: every student's totals and one label (None: unreadable) per case."""

    judge: str
    log_location: str
    models: dict[str, ModelTotals]
    labels: dict[CaseKey, ReviewLabel | None]
    removed: frozenset[ReviewLabel] = GRADING

    def reviews(self) -> dict[str, ModelReview]:
        return {
            name: model_review(
                totals,
                [label for (model, _), label in sorted(self.labels.items()) if model == name],
                self.removed,
            )
            for name, totals in self.models.items()
        }

    def rows(self) -> list[GapRow]:
        rows: list[GapRow] = []
        for name, review in self.reviews().items():
            n = review.n_families
            labelled = review.reviewed - review.unlabelled
            counts = [
                ("composition gap before review", review.composition, n),
                ("composition gap after review", review.composition - review.flagged, n),
                ("review flag rate", review.flagged, labelled),
            ]
            rows.extend(
                GapRow.share(name, DIAGNOSTIC, metric, k, total, self.log_location)
                for metric, k, total in counts
                if total
            )
        return rows

    def outcomes(self) -> dict[str, dict[str, bool]]:
        """Per case (``model/pid``), whether the judge flagged it as a grading error."""
        return {
            "review flagged": {
                f"{model}/{pid}": label in self.removed
                for (model, pid), label in sorted(self.labels.items())
            }
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "removed": sorted(label.value for label in self.removed),
            "priority": [label.value for label in PRIORITY],
            "models": {
                name: {
                    "n_families": r.n_families,
                    "composition": r.composition,
                    "reviewed": r.reviewed,
                    "unlabelled": r.unlabelled,
                    "flagged": r.flagged,
                    "flag_rate": r.flag_rate,
                    "share_before": r.share_before,
                    "share_after": r.share_after,
                    "labels": {label.value: n for label, n in r.labels.items()},
                }
                for name, r in self.reviews().items()
            },
            "labels": [
                {"model": model, "pid": pid, "label": label.value if label else None}
                for (model, pid), label in sorted(self.labels.items())
            ],
        }


def summarize(log: EvalLog, removed: frozenset[ReviewLabel] = GRADING) -> ReviewSummary:
    """Read a ladder_review log."""
    require_task(log, REVIEW_TASK)
    run = cast(ReviewRunMetadata, log.eval.metadata or {})
    models = {
        str(name): ModelTotals(int(t["n_families"]), int(t["composition"]), str(t["log"]))
        for name, t in run["models"].items()
    }
    labels: dict[CaseKey, ReviewLabel | None] = {}
    for sample in log.samples or []:
        meta = cast(ReviewCaseMetadata, sample.metadata)
        score = sample_score(sample)
        verdict = cast(ReviewVerdictMetadata, score.metadata or {}) if score else None
        label = verdict.get("label") if verdict else None
        labels[(str(meta["model"]), str(meta["pid"]))] = ReviewLabel(label) if label else None
    return ReviewSummary(log.eval.model, log.location, models, labels, removed)


def read(path: Path | str, removed: frozenset[ReviewLabel] = GRADING) -> ReviewSummary:
    """Read a ladder_review log from a file."""
    return summarize(read_log(path, task=REVIEW_TASK), removed)


@dataclass(frozen=True)
class LabelAgreement:
    """Two raters' labels on the cases both labelled."""

    a: str
    b: str
    n: int
    raw: float
    kappa: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "n": self.n, "raw": self.raw, "kappa": self.kappa}


def agreement(
    a_name: str,
    a: Mapping[CaseKey, ReviewLabel | None],
    b_name: str,
    b: Mapping[CaseKey, ReviewLabel | None],
) -> LabelAgreement:
    """Raw agreement and Cohen's kappa over the cases both raters gave a label."""
    both = sorted(k for k in set(a) & set(b) if a[k] is not None and b[k] is not None)
    if not both:
        raise ValueError(f"{a_name} and {b_name} labelled no case in common")
    result = cohen_kappa([a[k] for k in both], [b[k] for k in both])
    return LabelAgreement(a_name, b_name, result.n, result.observed, result.kappa)


def human_labels(path: Path, summary: ReviewSummary) -> dict[CaseKey, ReviewLabel | None]:
    """A human label file (JSONL ``{"pid", "label"}``, optionally ``"model"``) keyed like the
    review's cases; a pid the review holds for several students needs its ``model``."""
    try:
        rows, bad = jsonl_rows(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{path}: no such label file") from None
    if bad:
        raise ValueError(f"{path}: {bad[0]}")
    students: dict[str, list[str]] = {}
    for model, pid in summary.labels:
        students.setdefault(pid, []).append(model)
    valid = {label.value: label for label in ReviewLabel}
    out: dict[CaseKey, ReviewLabel | None] = {}
    for line, row in rows:
        if not isinstance(row, dict) or "pid" not in row or "label" not in row:
            raise ValueError(f'{path}: line {line}: needs "pid" and "label"')
        pid, name = str(row["pid"]), str(row["label"]).strip().lower()
        if name not in valid:
            choices = ", ".join(valid)
            raise ValueError(f"{path}: line {line}: label {name!r} is not one of {choices}")
        if "model" in row:
            model = str(row["model"])
        elif len(students.get(pid, [])) == 1:
            model = students[pid][0]
        elif pid in students:
            raise ValueError(
                f'{path}: line {line}: {pid} was reviewed for {students[pid]}; say which "model"'
            )
        else:
            continue  # a family this review did not see: nothing to agree on
        out[(model, pid)] = valid[name]
    return out


def review_view(
    summaries: Sequence[ReviewSummary],
    options: ViewOptions = ViewOptions(),
    agreements: Sequence[LabelAgreement] = (),
) -> View:
    """What ``ladder review`` and ``ladder review-report`` print and emit: each review, then
    the label agreement of every pair of raters given."""
    details = {
        "reviews": [s.to_dict() for s in summaries],
        "agreement": [a.to_dict() for a in agreements],
    }
    return View(
        [row for s in summaries for row in s.rows()],
        details,
        lambda console: print_review(details, console),
    )


def print_review(details: Mapping[str, Any], console: Console) -> None:
    """Per review and student: the share before/after, the flag rate, each label's count; then
    the agreement table."""
    for review in details["reviews"]:
        _print_one(review, console)
    if details["agreement"]:
        agree = Table(title="Label agreement")
        for column in ("rater A", "rater B", "cases", "raw", "Cohen's kappa"):
            agree.add_column(column, justify="right" if column in {"cases", "raw"} else "left")
        for a in details["agreement"]:
            kappa = "n/a" if a["kappa"] is None else f"{a['kappa']:.2f}"
            agree.add_row(a["a"], a["b"], str(a["n"]), f"{100 * a['raw']:.1f}%", kappa)
        console.print(agree)


def _print_one(details: Mapping[str, Any], console: Console) -> None:
    table = Table(title=f"Rubric review of composition-gap families | judge {details['judge']}")
    for column in ("student", "families", "comp. gap", "flagged", "flag rate", "before", "after"):
        table.add_column(column, justify="left" if column == "student" else "right")
    for name, m in details["models"].items():
        rate = "n/a" if m["flag_rate"] is None else f"{100 * m['flag_rate']:.1f}%"
        table.add_row(
            name,
            str(m["n_families"]),
            str(m["composition"]),
            str(m["flagged"]),
            rate,
            f"{100 * m['share_before']:.1f}%",
            f"{100 * m['share_after']:.1f}%",
        )
    console.print(table)
    labels = Table(title="Labels (priority order; flagged: " + ", ".join(details["removed"]) + ")")
    labels.add_column("student")
    for label in details["priority"]:
        labels.add_column(label, justify="right")
    labels.add_column("unlabelled", justify="right")
    for name, m in details["models"].items():
        labels.add_row(
            name, *(str(m["labels"][label]) for label in details["priority"]), str(m["unlabelled"])
        )
    console.print(labels)
