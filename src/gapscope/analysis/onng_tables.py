"""The terminal tables of an O-NNG run (:class:`~gapscope.analysis.onng.ONNGSummary`): per model,
the outcomes at each noise level and the tests of a lambda effect."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table

from gapscope.analysis.terminal import fmt

if TYPE_CHECKING:
    from rich.console import Console

    from gapscope.analysis.onng import ModelSummary, ONNGSummary


def print_onng(summary: ONNGSummary, console: Console) -> None:
    """The per-lambda table and the tests of each model."""
    for model, m in summary.models.items():
        _print_lambdas(model, m, console)
        _print_tests(model, m, console)


def _print_lambdas(model: str, m: ModelSummary, console: Console) -> None:
    """One row per noise level: samples, correct rate, latency, parse and verdict counts."""
    table = Table(title=f"O-NNG {model}")
    for col in ("lambda", "n", "correct rate", "mean s", "mean tokens", "parse", "verdicts"):
        table.add_column(col, justify="right")
    for row in m.by_lam:
        parse = ", ".join(f"{k} {v}" for k, v in row.parse_status.items())
        verdicts = ", ".join(f"{k} {v}" for k, v in row.verdicts.items())
        table.add_row(
            f"{row.lam:g}",
            str(row.n),
            fmt(row.correct_rate),
            fmt(row.mean_inference_s),
            fmt(row.mean_output_tokens, 4),
            parse,
            verdicts,
        )
    console.print(table)


def _print_tests(model: str, m: ModelSummary, console: Console) -> None:
    """ANOVA and Kruskal-Wallis of each outcome across the noise levels (``-``: undefined)."""
    tests = Table(title=f"{model}: effect of lambda")
    for col in ("outcome", "ANOVA F", "ANOVA p", "Kruskal H", "Kruskal p"):
        tests.add_column(col, justify="right")
    for outcome, t in m.tests.items():
        tests.add_row(
            outcome,
            fmt(t.anova.statistic if t.anova else None),
            fmt(t.anova.p_value if t.anova else None),
            fmt(t.kruskal.statistic if t.kruskal else None),
            fmt(t.kruskal.p_value if t.kruskal else None),
        )
    console.print(tests)
