"""The terminal tables of whole-proof runs (:class:`~gapscope.analysis.prove.ProveSummary`, one
per model): pass@k, the coherence of the attempts, and on request each problem's pass@k."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.table import Table

from gapscope.analysis.terminal import percent, warning
from gapscope.prove import Coherence

if TYPE_CHECKING:
    from rich.console import Console

    from gapscope.analysis.prove import ProveSummary


def print_prove(summaries: Sequence[ProveSummary], console: Console, per_problem: bool) -> None:
    """pass@k and coherence tables; with ``per_problem`` also each problem's n, c, pass@k."""
    _print_pass_at_k(summaries, console)
    _print_coherence(summaries, console)
    for s in summaries:
        for note in s.notes:
            console.print(warning(f"{s.model}:", note))
    if per_problem:
        for s in summaries:
            _print_problems(s, console)


def _print_pass_at_k(summaries: Sequence[ProveSummary], console: Console) -> None:
    """One row per model: problems, attempts, server errors, then pass@k for every k any
    model reports (``n/a`` where a model has none)."""
    ks = list(dict.fromkeys(k for s in summaries for k in s.pass_at_k))
    passk = Table(title="Whole-proof pass@k (unbiased, mean over problems)")
    for col in ("model", "problems", "attempts", "server errors"):
        passk.add_column(col, justify="left" if col == "model" else "right")
    for k in ks:
        passk.add_column(f"pass@{k}", justify="right")
    for s in summaries:
        passk.add_row(
            s.model,
            str(len(s.problems)),
            str(s.attempts),
            str(s.server_errors),
            *(percent(s.pass_at_k.get(k)) for k in ks),
        )
    console.print(passk)


def _print_coherence(summaries: Sequence[ProveSummary], console: Console) -> None:
    """Attempts per coherence class (count and share) and the coherent share, per model."""
    classes = [c for c in Coherence if c is not Coherence.SERVER_ERROR]
    coherence = Table(title="Coherence of attempts (server errors excluded)")
    coherence.add_column("model")
    for c in classes:
        coherence.add_column(c.value, justify="right")
    coherence.add_column("coherent", justify="right")
    for s in summaries:
        coherence.add_row(
            s.model,
            *(f"{s.coherence[c]} ({percent(s.coherence_fraction(c))})" for c in classes),
            percent(s.coherent_fraction),
        )
    console.print(coherence)


def _print_problems(s: ProveSummary, console: Console) -> None:
    """Each problem of one model: attempts checked (n), proven (c) and its pass@k."""
    table = Table(title=f"Per-problem pass@k: {s.model}")
    table.add_column("problem")
    for col in ("n", "c", *(f"pass@{k}" for k in s.ks)):
        table.add_column(col, justify="right")
    for p in s.problems:
        table.add_row(
            p.name,
            str(p.n),
            str(p.c),
            *(percent(s.problem_pass_at_k(p, k)) for k in s.ks),
        )
    console.print(table)
