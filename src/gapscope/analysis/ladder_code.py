"""The code pilot's log -> per-attempt and problem-level solve rates per help condition.

Per-attempt: passed attempts over all attempts of a condition (the paper's 6.5 % -> 41.2 % ->
88.8 %). Problem-level: problems with at least one passing attempt (1 -> 6 -> 10 of 10). How
the failed attempts ended (wrong answer, timeout, memory, blocked, no code) is counted too, so
a sandbox that kills everything is not mistaken for a weak model.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from inspect_ai.scorer import CORRECT
from rich.console import Console
from rich.table import Table

from gapscope.analysis.logs import read_log, require_task, run_info, sample_score
from gapscope.analysis.profile import GapRow
from gapscope.analysis.view import View, ViewOptions
from gapscope.ladder import (
    CODE_CONDITIONS,
    CODE_TASK,
    CodeCondition,
    CodeProbeMetadata,
    CodeRunMetadata,
)

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog

DIAGNOSTIC = "OracleLadder code pilot"


@dataclass(frozen=True)
class ConditionResult:
    """One condition: attempts, passing attempts, problems solved, how attempts ended."""

    attempts: int
    passed: int
    problems: int
    solved: dict[str, bool]
    endings: dict[str, int]

    @property
    def attempt_rate(self) -> float:
        return self.passed / self.attempts if self.attempts else 0.0

    @property
    def problems_solved(self) -> int:
        return sum(self.solved.values())


@dataclass(frozen=True)
class CodeSummary:
    """One ladder_code log."""

    model: str
    log_location: str
    isolation: str
    conditions: dict[CodeCondition, ConditionResult]

    def rows(self) -> list[GapRow]:
        rows: list[GapRow] = []
        for condition, r in self.conditions.items():
            for metric, k, n in (
                (f"attempts passing {condition.value}", r.passed, r.attempts),
                (f"problems solved {condition.value}", r.problems_solved, r.problems),
            ):
                rows.append(GapRow.share(self.model, DIAGNOSTIC, metric, k, n, self.log_location))
        return rows

    def outcomes(self) -> dict[str, dict[str, bool]]:
        """Per condition, which problems had a passing attempt."""
        return {f"solved {c.value}": dict(r.solved) for c, r in self.conditions.items()}

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "isolation": self.isolation,
            "conditions": {
                c.value: {
                    "attempts": r.attempts,
                    "passed": r.passed,
                    "attempt_rate": r.attempt_rate,
                    "problems": r.problems,
                    "problems_solved": r.problems_solved,
                    "endings": r.endings,
                    "solved": r.solved,
                }
                for c, r in self.conditions.items()
            },
        }


def summarize(log: EvalLog) -> CodeSummary:
    """Read a ladder_code log (every epoch of every sample)."""
    require_task(log, CODE_TASK)
    attempts: Counter[CodeCondition] = Counter()
    passed: Counter[CodeCondition] = Counter()
    endings: dict[CodeCondition, Counter[str]] = {}
    solved: dict[CodeCondition, dict[str, bool]] = {}
    for sample in log.samples or []:
        meta = cast(CodeProbeMetadata, sample.metadata)
        condition, pid = CodeCondition(meta["condition"]), str(meta["pid"])
        score = sample_score(sample)
        ok = score is not None and score.value == CORRECT
        attempts[condition] += 1
        passed[condition] += ok
        ending = str(score.answer) if score is not None and score.answer else "unscored"
        endings.setdefault(condition, Counter())[ending] += 1
        by_pid = solved.setdefault(condition, {})
        by_pid[pid] = by_pid.get(pid, False) or ok
    run = cast(CodeRunMetadata, log.eval.metadata or {})
    info = run_info(log)
    return CodeSummary(
        model=info.model,
        log_location=info.location,
        isolation=str(run["isolation"]),
        conditions={
            c: ConditionResult(
                attempts=attempts[c],
                passed=passed[c],
                problems=len(solved[c]),
                solved=dict(sorted(solved[c].items())),
                endings=dict(sorted(endings[c].items())),
            )
            for c in CODE_CONDITIONS
            if attempts[c]
        },
    )


def read(path: Path | str) -> CodeSummary:
    """Read a ladder_code log from a file."""
    return summarize(read_log(path, task=CODE_TASK))


def code_view(summary: CodeSummary, options: ViewOptions = ViewOptions()) -> View:
    """What ``run ladder-code`` prints and emits."""
    details = summary.to_dict()
    return View(summary.rows(), details, lambda console: print_code(details, console))


def print_code(details: Mapping[str, Any], console: Console) -> None:
    """The help ladder on code: per condition, attempts passing and problems solved."""
    table = Table(title=f"Code pilot | {details['model']} | isolation: {details['isolation']}")
    for column in ("condition", "attempts passing", "problems solved", "failed attempts"):
        table.add_column(
            column, justify="left" if column in {"condition", "failed attempts"} else "right"
        )
    for name, c in details["conditions"].items():
        failures = ", ".join(f"{k} {n}" for k, n in c["endings"].items() if k != "passed")
        table.add_row(
            name,
            f"{c['passed']}/{c['attempts']} ({100 * c['attempt_rate']:.1f}%)",
            f"{c['problems_solved']} of {c['problems']}",
            failures or "-",
        )
    console.print(table)
