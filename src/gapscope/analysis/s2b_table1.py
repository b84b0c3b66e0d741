"""The seed's Table 1: ZSCT and adj-ZSCT under the three benchmark configurations, with the
published values beside ours.

The seed (``seeds/000``, Table 1) evaluates DeepSeek-Prover-V2-7B over 4 seeds under three
configurations that isolate its two design choices: the original S2B (SCS stimuli, 0-shot)
57.9 % (adj-ZSCT 15.8), categorical stimuli 0-shot 40.0 % (adj-ZSCT 0), and the full S2B-LM
design (categorical + 10 verbalizer exemplars with chain of thought) 87.0 % (adj-ZSCT 74.0).
The presets ``scs-0shot``, ``cat-0shot`` and ``cat-10shot`` are those rows
(:mod:`gapscope.s2b.config`). The published column is a reference, not an expectation: it is
one 7B model's result; a different model gives different numbers, and only DeepSeek-Prover-V2-7B
on the same presets is a like-for-like comparison.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.table import Table

from gapscope.analysis.s2b import S2BRunSummary, summarize
from gapscope.analysis.view import View

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog
    from rich.console import Console

    from gapscope.s2b import SeedSummary


@dataclass(frozen=True)
class Published:
    """One row of the seed's Table 1: its configuration and the published numbers."""

    preset: str
    configuration: str
    zsct: float
    adj_zsct: float


PUBLISHED_MODEL = "DeepSeek-Prover-V2-7B"
PUBLISHED_SEEDS = 4
TABLE1 = (
    Published("scs-0shot", "Original S2B (SCS, 0-shot)", 57.9, 15.8),
    Published("cat-0shot", "Categorical, 0-shot", 40.0, 0.0),
    Published("cat-10shot", "S2B-LM (categorical + 10-shot CoT)", 87.0, 74.0),
)
"""The seed's Table 1 rows, in its order (values from its text: 57.9 / 15.8, 40.0 / 0,
87.0 / 74.0, DeepSeek-Prover-V2-7B over 4 seeds)."""

TABLE1_PRESETS = tuple(row.preset for row in TABLE1)


@dataclass(frozen=True)
class Table1Row:
    """One configuration: ours (mean ± sd over seeds; None where the preset was not run or no
    seed was scored) beside the published numbers."""

    published: Published
    seeds: int
    zsct: SeedSummary | None
    adj_zsct: SeedSummary | None
    log: str | None

    def to_dict(self) -> dict[str, Any]:
        def summary(s: SeedSummary | None) -> dict[str, float] | None:
            return None if s is None else {"mean": s.mean, "sd": s.sd}

        return {
            "preset": self.published.preset,
            "configuration": self.published.configuration,
            "seeds": self.seeds,
            "zsct": summary(self.zsct),
            "adj_zsct": summary(self.adj_zsct),
            "published": {"zsct": self.published.zsct, "adj_zsct": self.published.adj_zsct},
            "log": self.log,
        }


def table1(summaries: Sequence[S2BRunSummary]) -> list[Table1Row]:
    """Table 1's rows from listener runs of the three presets (one run each).

    ValueError when a run is a speaker run, or two runs share a preset or differ in model or
    listener: Table 1 compares configurations of one listener.
    """
    if any(s.role != "listener" for s in summaries):
        raise ValueError("Table 1 is a listener table: give listener runs (--role listener)")
    labels = {s.label for s in summaries}
    if len(labels) > 1:
        raise ValueError(f"Table 1 compares one listener's runs; got {', '.join(sorted(labels))}")
    by_preset: dict[str, S2BRunSummary] = {}
    for s in summaries:
        if s.preset in by_preset:
            raise ValueError(f"two runs of preset {s.preset!r}: give one per configuration")
        by_preset[s.preset] = s
    rows = []
    for published in TABLE1:
        run = by_preset.get(published.preset)
        scored = run.summary if run is not None else {}
        rows.append(
            Table1Row(
                published,
                scored["zsct"].n if "zsct" in scored else 0,
                scored.get("zsct"),
                scored.get("adj_zsct"),
                run.log_location if run is not None else None,
            )
        )
    return rows


def table1_view(logs: Sequence[EvalLog]) -> View:
    """The runs of a ``--table1`` command: each run's gap-profile rows, Table 1 as details and
    as the printed table, each run's notes."""
    summaries = [summarize(log) for log in logs]
    rows = table1(summaries)
    label = summaries[0].label if summaries else "no run"
    return View(
        [row for s in summaries for row in s.rows()],
        {"model": label, "table1": [row.to_dict() for row in rows]},
        lambda console: print_table1(rows, label, console),
        [f"{s.preset}: {note}" for s in summaries for note in s.notes],
    )


def print_table1(rows: Sequence[Table1Row], label: str, console: Console) -> None:
    """Table 1's layout: configuration, ZSCT and adj-ZSCT (ours, mean ± sd over seeds), then
    the published pair."""
    table = Table(title=f"S2B-LM Table 1 | {label} vs {PUBLISHED_MODEL} (seed, Table 1)")
    for column in ("configuration", "preset", "seeds", "ZSCT", "adj-ZSCT"):
        table.add_column(column, justify="left" if column == "configuration" else "right")
    table.add_column(f"{PUBLISHED_MODEL} ZSCT", justify="right")
    table.add_column(f"{PUBLISHED_MODEL} adj-ZSCT", justify="right")
    for row in rows:
        table.add_row(
            row.published.configuration,
            row.published.preset,
            str(row.seeds),
            "not run" if row.zsct is None else str(row.zsct),
            "" if row.adj_zsct is None else str(row.adj_zsct),
            f"{row.published.zsct:.1f}",
            f"{row.published.adj_zsct:.1f}",
        )
    console.print(table)
    console.print(
        f"ours: mean ± sd over seeds, adj-ZSCT = adj(mean ZSCT); published: {PUBLISHED_MODEL},"
        f" {PUBLISHED_SEEDS} seeds (a reference for that model, not a target for another)"
    )
