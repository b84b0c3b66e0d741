"""Decoding-budget sensitivity: one model's ladder at two token budgets (the paper's Table 22).

The paper probed every model at ``max_tokens`` 4,096 and 16,384 on the same 354 families
(Appendix L): at 16K, OutcomeRL-2K, gpt-oss-20b and DeepSeek-V3.1 gained 14-42 any-probe
families while the others moved by at most 7, and DeepSeek-V3.1 went from fifth on any-probe
count (141/354) to second (183/354). The readout puts each model's DIRECT, ROADMAP-NEEDED,
ANSWERS-NEEDED and any-probe counts at the two budgets side by side (Table 22's columns
dir./desc/gold/ceil.), with the any-probe change and each model's any-probe rank at each
budget. A run's budget is the ``max_tokens`` its log records.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gapscope.analysis.ladder import ModelRun, model_run
from gapscope.analysis.logs import LogError, read_log
from gapscope.ladder import TASK, LadderOutcome, profile

if TYPE_CHECKING:
    from rich.console import Console

COLUMNS = (
    LadderOutcome.DIRECT,
    LadderOutcome.ROADMAP_NEEDED,
    LadderOutcome.ANSWERS_NEEDED,
)


class BudgetError(ValueError):
    """Runs that do not pair up as two budgets of the same models; names what is wrong."""


@dataclass(frozen=True)
class BudgetRun:
    """One model's run and the token budget it ran at."""

    model: str
    max_tokens: int
    run: ModelRun


@dataclass(frozen=True)
class BudgetRow:
    """One model at the low and the high budget: outcome counts, any-probe, its rank."""

    model: str
    low: dict[str, int]
    high: dict[str, int]
    rank_low: int
    rank_high: int

    @property
    def any_probe_change(self) -> int:
        return self.high["any_probe"] - self.low["any_probe"]


@dataclass(frozen=True)
class BudgetComparison:
    """Table 22: every model at ``low`` and ``high`` tokens, over ``n_families`` each."""

    low: int
    high: int
    tau: int
    rows: tuple[BudgetRow, ...]

    def to_dict(self) -> dict[str, object]:
        return {
            "low_max_tokens": self.low,
            "high_max_tokens": self.high,
            "tau": self.tau,
            "models": {
                r.model: {
                    "low": r.low,
                    "high": r.high,
                    "any_probe_change": r.any_probe_change,
                    "any_probe_rank_low": r.rank_low,
                    "any_probe_rank_high": r.rank_high,
                }
                for r in self.rows
            },
        }


def read_budget_run(path: Path | str, name: str | None = None) -> BudgetRun:
    """An oracle_ladder log as a run at the budget its log records."""
    log = read_log(path, task=TASK)
    max_tokens = log.plan.config.max_tokens
    if max_tokens is None:
        raise LogError(f"{log.location}: the log records no max_tokens, so no budget to compare")
    run = model_run(log, name)
    return BudgetRun(run.name, max_tokens, run)


def _counts(run: ModelRun, tau: int) -> dict[str, int]:
    p = profile(run.families(), tau)
    return {
        **{o.value: p.outcomes[o] for o in COLUMNS},
        "any_probe": p.any_probe,
        "n_families": p.n_families,
    }


def _ranks(counts: dict[str, dict[str, int]]) -> dict[str, int]:
    """Rank 1 = most any-probe families; tied models share the better rank."""
    return {
        m: 1 + sum(other["any_probe"] > c["any_probe"] for other in counts.values())
        for m, c in counts.items()
    }


def compare_budgets(runs: Sequence[BudgetRun], tau: int = 1) -> BudgetComparison:
    """Pair every model's two runs, one at each of exactly two budgets, in first-seen order.

    Both runs of a model must be over the same families: a budget effect measured on
    different families would be a family effect.
    """
    budgets = sorted({r.max_tokens for r in runs})
    if len(budgets) != 2:
        raise BudgetError(f"need runs at exactly two budgets, got max_tokens {budgets or 'none'}")
    low, high = budgets
    by_model: dict[str, dict[int, ModelRun]] = {}
    for r in runs:
        at = by_model.setdefault(r.model, {})
        if r.max_tokens in at:
            raise BudgetError(f"{r.model}: two runs at max_tokens {r.max_tokens}")
        at[r.max_tokens] = r.run
    for model, at in by_model.items():
        if set(at) != {low, high}:
            raise BudgetError(f"{model}: no run at max_tokens {({low, high} - set(at)).pop()}")
        if set(at[low].tested) != set(at[high].tested):
            raise BudgetError(f"{model}: its {low}- and {high}-token runs are over other families")
    counts = {b: {m: _counts(at[b], tau) for m, at in by_model.items()} for b in (low, high)}
    ranks = {b: _ranks(counts[b]) for b in (low, high)}
    rows = tuple(
        BudgetRow(m, counts[low][m], counts[high][m], ranks[low][m], ranks[high][m])
        for m in by_model
    )
    return BudgetComparison(low, high, tau, rows)


def print_budgets(table: BudgetComparison, console: Console) -> None:
    """Table 22's layout: the outcome counts and any-probe ("ceil.") at each budget."""
    from rich.table import Table

    out = Table(
        title=f"Decoding budget: max_tokens {table.low} vs {table.high} (tau = {table.tau})"
    )
    out.add_column("model")
    for budget in (table.low, table.high):
        for name in ("dir.", "desc", "gold", "ceil.", "rank"):
            out.add_column(f"{budget} {name}", justify="right")
    out.add_column("ceil. change", justify="right")
    for r in table.rows:
        cells = []
        for counts, rank in ((r.low, r.rank_low), (r.high, r.rank_high)):
            cells += [str(counts[o.value]) for o in COLUMNS]
            cells += [str(counts["any_probe"]), str(rank)]
        out.add_row(r.model, *cells, f"{r.any_probe_change:+d}")
    console.print(out)
