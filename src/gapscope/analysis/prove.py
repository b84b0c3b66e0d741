"""``prove`` logs -> per-problem (n, c) and coherence counts -> pass@k and coherence fractions.

Every attempt is an epoch of its problem's sample, and its score metadata holds the coherence
class. Attempts whose check failed (``server_error``) say nothing about the proof, so they are
left out of n, of pass@k and of the coherence fractions, and counted on their own.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from gapscope.analysis.logs import (
    counted_samples,
    malformed_sample,
    read_log,
    require_task,
    run_info,
    sample_score,
)
from gapscope.analysis.profile import GapRow
from gapscope.prove import COHERENT, TASK, AttemptMetadata, Coherence, ProblemMetadata, RunMetadata
from gapscope.stats import bootstrap_ci, mean_pass_at_k, pass_at_k

if TYPE_CHECKING:
    from pathlib import Path

    from inspect_ai.log import EvalLog

DIAGNOSTIC = "pass@k"
BOOTSTRAP_RESAMPLES = 2000


@dataclass(frozen=True)
class ProblemCounts:
    """The attempts at one problem: ``n`` checked, ``c`` proven, and every class's count."""

    name: str
    coherence: dict[Coherence, int]

    @property
    def n(self) -> int:
        return sum(v for k, v in self.coherence.items() if k is not Coherence.SERVER_ERROR)

    @property
    def c(self) -> int:
        return self.coherence[Coherence.PROVEN]


@dataclass(frozen=True)
class ProveRun:
    """Everything one log says about one model."""

    model: str
    log_location: str
    status: str
    ks: tuple[int, ...]
    problems: list[ProblemCounts]


def read_run(log: EvalLog, model: str | None = None) -> ProveRun:
    """Count every attempt of a ``prove`` log by problem and coherence class."""
    require_task(log, TASK)
    counts: dict[str, Counter[Coherence]] = {}
    for sample in counted_samples(log):
        with malformed_sample(log, sample):
            score = sample_score(sample)
            name = str(cast(ProblemMetadata, sample.metadata)["name"])
            meta = cast(
                AttemptMetadata, score.metadata if score is not None and score.metadata else {}
            )
            # a sample that errored before scoring was never checked: nothing is known about it
            coherence = Coherence(meta.get("coherence", Coherence.SERVER_ERROR))
            counts.setdefault(name, Counter())[coherence] += 1
    problems = [
        ProblemCounts(name, {c: counts[name][c] for c in Coherence}) for name in sorted(counts)
    ]
    ks = tuple(int(k) for k in cast(RunMetadata, log.eval.metadata or {}).get("k", [1]))
    info = run_info(log)
    return ProveRun(model or info.model, info.location, info.status, ks, problems)


def read(path: Path | str) -> ProveRun:
    """Read one ``prove`` log file."""
    return read_run(read_log(path, task=TASK))


@dataclass(frozen=True)
class ProveSummary:
    """pass@k over problems (None where some problem has n < k, with a note), coherence."""

    model: str
    log: str
    status: str
    ks: tuple[int, ...]
    problems: list[ProblemCounts]
    pass_at_k: dict[int, float | None]
    notes: list[str]
    coherence: dict[Coherence, int]
    attempts: int = field(init=False)

    def __post_init__(self) -> None:
        checked = sum(v for c, v in self.coherence.items() if c is not Coherence.SERVER_ERROR)
        object.__setattr__(self, "attempts", checked)

    @property
    def server_errors(self) -> int:
        return self.coherence[Coherence.SERVER_ERROR]

    def coherence_fraction(self, c: Coherence) -> float | None:
        return self.coherence[c] / self.attempts if self.attempts else None

    @property
    def coherent_fraction(self) -> float | None:
        coherent = sum(self.coherence[c] for c in COHERENT)
        return coherent / self.attempts if self.attempts else None

    def problem_pass_at_k(self, p: ProblemCounts, k: int) -> float | None:
        return pass_at_k(p.n, p.c, k) if k <= p.n else None

    def rows(self) -> list[GapRow]:
        """pass@k in percent, with a bootstrap interval over problems."""
        rows = []
        for k, value in self.pass_at_k.items():
            ci = None
            if value is not None:
                per_problem = [pass_at_k(p.n, p.c, k) for p in self.problems]
                boot = bootstrap_ci(
                    per_problem,
                    statistic=lambda v: float(v.mean()),
                    n_resamples=BOOTSTRAP_RESAMPLES,
                    rng=np.random.default_rng(0),
                )
                interval = boot.interval
                ci = None if interval is None else (100 * interval[0], 100 * interval[1])
            rows.append(
                GapRow(
                    model=self.model,
                    diagnostic=DIAGNOSTIC,
                    metric=f"pass@{k}",
                    value=None if value is None else 100 * value,
                    ci=ci,
                    n=len(self.problems),
                    log=self.log,
                )
            )
        return rows

    def outcomes(self) -> dict[str, dict[str, bool]]:
        """Per problem: was it proven by any checked attempt?"""
        return {"proven (any attempt)": {p.name: p.c > 0 for p in self.problems if p.n}}

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "log": self.log,
            "status": self.status,
            "problems": len(self.problems),
            "attempts": self.attempts,
            "server_errors": self.server_errors,
            "pass_at_k": {str(k): v for k, v in self.pass_at_k.items()},
            "notes": self.notes,
            "coherence": {c.value: n for c, n in self.coherence.items()},
            "coherence_fraction": {
                c.value: self.coherence_fraction(c)
                for c in Coherence
                if c is not Coherence.SERVER_ERROR
            },
            "coherent_fraction": self.coherent_fraction,
            "per_problem": [
                {
                    "name": p.name,
                    "n": p.n,
                    "c": p.c,
                    "pass_at_k": {str(k): self.problem_pass_at_k(p, k) for k in self.ks},
                    "coherence": {c.value: p.coherence[c] for c in Coherence},
                }
                for p in self.problems
            ],
        }


def verdict(summary: ProveSummary, row: GapRow) -> str:
    """For the report's first table: the problems some checked attempt proved, and pass@k at
    the largest k the attempts support."""
    checked = [p for p in summary.problems if p.n]
    if not checked:
        return "no attempt was checked"
    text = f"proves {sum(p.c > 0 for p in checked)} of {len(checked)} problems"
    known = [(k, v) for k, v in summary.pass_at_k.items() if v is not None]
    if known:
        k, value = max(known)
        text += f" (pass@{k} {100 * value:.0f} %)"
    return text


def _aggregate(problems: Sequence[ProblemCounts], k: int) -> tuple[float | None, str | None]:
    if not problems:
        return None, "no attempts"
    short = [p for p in problems if p.n < k]
    if short:
        listed = ", ".join(f"{p.name} (n={p.n})" for p in short[:5])
        more = f" and {len(short) - 5} more" if len(short) > 5 else ""
        return None, f"pass@{k} needs n >= {k} checked attempts per problem: {listed}{more}"
    return mean_pass_at_k([(p.n, p.c) for p in problems], k), None


def summarize(run: ProveRun, ks: Sequence[int] | None = None) -> ProveSummary:
    """pass@k per problem and over problems, coherence counts and fractions.

    A k larger than some problem's n gives None (with a note) instead of a biased number.
    """
    chosen = tuple(ks) if ks else run.ks
    bad = [k for k in chosen if k < 1]
    if bad:
        raise ValueError(f"k must be >= 1, got {bad}")
    totals: Counter[Coherence] = Counter()
    for p in run.problems:
        totals.update(p.coherence)
    aggregate: dict[int, float | None] = {}
    notes: list[str] = []
    for k in chosen:
        aggregate[k], note = _aggregate(run.problems, k)
        notes.extend([note] if note else [])
    return ProveSummary(
        model=run.model,
        log=run.log_location,
        status=run.status,
        ks=chosen,
        problems=run.problems,
        pass_at_k=aggregate,
        notes=notes,
        coherence={c: totals[c] for c in Coherence},
    )
