"""The terminal tables of an S2B-LM run (:class:`~gapscope.analysis.s2b.S2BRunSummary`): per-seed
ZSCT rows for the listener role, constructivity and the language measures for the speaker role."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table

from gapscope.analysis.terminal import styled, warning

if TYPE_CHECKING:
    from rich.console import Console

    from gapscope.analysis.s2b import S2BRunSummary

LISTENER_KEYS = ("zsct", "adj_zsct", "zsct_strict", "unparsed", "support_acc")
"""The listener role's per-seed columns, in the order the table shows them."""

SPEAKER_COLUMNS = {
    "zsct": ("ZSCT", ".1f"),
    "adj_zsct": ("adj-ZSCT", ".1f"),
    "zsct_strict": ("ZSCT strict", ".1f"),
    "malformed": ("malformed %", ".1f"),
    "support_acc": ("support acc", ".1f"),
    "topsim": ("topsim", ".3f"),
    "posdis": ("posdis", ".3f"),
    "bosdis": ("bosdis", ".3f"),
}
"""The speaker role's per-seed columns: score key -> (heading, format)."""


def print_s2b(summary: S2BRunSummary, console: Console) -> None:
    """Per-seed ZSCT rows and the mean +- sd over seeds (listener or speaker role)."""
    if summary.role == "speaker":
        _print_speaker(summary, console)
    else:
        _print_listener(summary, console)
    for note in summary.notes:
        console.print(warning("warning:", note))
    console.print(f"model: {summary.model}  log: {summary.log_location}")


def _print_listener(summary: S2BRunSummary, console: Console) -> None:
    """Receptivity per seed: ZSCT, adj-ZSCT, strict ZSCT, unparsed decisions, support
    accuracy, then mean ± sd over seeds; a seed that failed shows its error."""
    table = Table(title=f"S2B-LM {summary.preset} | listener {summary.listener}")
    for column in ("seed", "ZSCT", "adj-ZSCT", "ZSCT strict", "unparsed", "support acc"):
        table.add_column(column, justify="right")
    for row in summary.per_seed:
        if "error" in row:
            table.add_row(str(row["seed"]), styled(row["error"], "red"), "", "", "", "")
            continue
        table.add_row(
            str(row["seed"]),
            f"{row['zsct']:.1f}",
            f"{row['adj_zsct']:.1f}",
            f"{row['zsct_strict']:.1f}",
            f"{row['unparsed']:.0f}",
            f"{row['support_acc']:.1f}",
        )
    if summary.summary:
        table.add_row("mean ± sd", *(str(summary.summary[k]) for k in LISTENER_KEYS))
    console.print(table)


def _print_speaker(summary: S2BRunSummary, console: Console) -> None:
    """Constructivity per seed: the rule listener's ZSCT on the speaker's messages, the
    malformed share and the language measures, then mean ± sd over seeds."""
    table = Table(
        title=f"S2B-LM {summary.preset} | speaker {summary.speaker} (constructivity, rule listener)"
    )
    table.add_column("seed", justify="right")
    for heading, _ in SPEAKER_COLUMNS.values():
        table.add_column(heading, justify="right")
    for row in summary.per_seed:
        if "error" in row:
            blanks = [""] * (len(SPEAKER_COLUMNS) - 1)
            table.add_row(str(row["seed"]), styled(row["error"], "red"), *blanks)
            continue
        table.add_row(
            str(row["seed"]), *(format(row[k], spec) for k, (_, spec) in SPEAKER_COLUMNS.items())
        )
    s = summary.summary
    if s:
        table.add_row(
            "mean ± sd",
            *(
                f"{format(s[k].mean, spec)} ± {format(s[k].sd, spec)}"
                for k, (_, spec) in SPEAKER_COLUMNS.items()
            ),
        )
    console.print(table)
    console.print(
        "topsim: Spearman between meaning Hamming and message edit distances; posdis, bosdis: "
        "Chaabouni et al. (2020); all over the speaker's own well-formed messages"
    )
