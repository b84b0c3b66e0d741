"""``prove`` logs -> per-problem (n, c) and coherence counts -> pass@k and coherence fractions.

The log is the only results format: every attempt is an epoch of its problem's sample, and
its score metadata holds the coherence class. Attempts whose check failed (``server_error``)
say nothing about the proof, so they are left out of n, of pass@k and of the coherence
fractions, and counted on their own.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from inspect_ai.log import EvalLog

from gapscope.prove.coherence import COHERENT, Coherence
from gapscope.stats.passk import mean_pass_at_k, pass_at_k


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
    if log.eval.task.split("/")[-1] != "prove":
        raise ValueError(f"{log.location} is a {log.eval.task!r} log, not a prove log")
    counts: dict[str, Counter[Coherence]] = {}
    for sample in log.samples or []:
        score = next(iter((sample.scores or {}).values()), None)
        name = str(sample.metadata["name"])
        meta = score.metadata if score is not None and score.metadata else {}
        # a sample that errored before scoring was never checked: nothing is known about it
        coherence = Coherence(meta.get("coherence", Coherence.SERVER_ERROR))
        counts.setdefault(name, Counter())[coherence] += 1
    problems = [
        ProblemCounts(name, {c: counts[name][c] for c in Coherence}) for name in sorted(counts)
    ]
    ks = tuple(int(k) for k in (log.eval.metadata or {}).get("k", [1]))
    return ProveRun(model or log.eval.model, log.location, log.status, ks, problems)


def _aggregate(problems: Sequence[ProblemCounts], k: int) -> tuple[float | None, str | None]:
    short = [p for p in problems if p.n < k]
    if short:
        listed = ", ".join(f"{p.name} (n={p.n})" for p in short[:5])
        more = f" and {len(short) - 5} more" if len(short) > 5 else ""
        return None, f"pass@{k} needs n >= {k} checked attempts per problem: {listed}{more}"
    return mean_pass_at_k([(p.n, p.c) for p in problems], k), None


def summarize(run: ProveRun, ks: Sequence[int] | None = None) -> dict[str, Any]:
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
    checked = sum(v for c, v in totals.items() if c is not Coherence.SERVER_ERROR)
    aggregate: dict[str, float | None] = {}
    notes: list[str] = []
    for k in chosen:
        value, note = _aggregate(run.problems, k) if run.problems else (None, "no attempts")
        aggregate[str(k)] = value
        notes.extend([note] if note else [])
    return {
        "model": run.model,
        "log": run.log_location,
        "status": run.status,
        "problems": len(run.problems),
        "attempts": checked,
        "server_errors": totals[Coherence.SERVER_ERROR],
        "pass_at_k": aggregate,
        "notes": notes,
        "coherence": {c.value: totals[c] for c in Coherence},
        "coherence_fraction": {
            c.value: totals[c] / checked if checked else None
            for c in Coherence
            if c is not Coherence.SERVER_ERROR
        },
        "coherent_fraction": (sum(totals[c] for c in COHERENT) / checked if checked else None),
        "per_problem": [
            {
                "name": p.name,
                "n": p.n,
                "c": p.c,
                "pass_at_k": {str(k): pass_at_k(p.n, p.c, k) if k <= p.n else None for k in chosen},
                "coherence": {c.value: p.coherence[c] for c in Coherence},
            }
            for p in run.problems
        ],
    }
