"""The first table's choice of headline: the spec's headline metric (a prefix: S2B's name
their preset) wherever the model has it, else the diagnostic's first row; warnings on the
cell of the model and diagnostic they belong to."""

from __future__ import annotations

from rich.console import Console

from gapscope.analysis.glance import headlines, print_glance
from gapscope.analysis.profile import GapRow


def _row(model: str, diagnostic: str, metric: str, k: int = 1) -> GapRow:
    return GapRow.share(model, diagnostic, metric, k, 4, "x.eval")


ROWS = [
    _row("m", "OracleLadder", "outcome DIRECT"),
    _row("m", "OracleLadder", "gap composition", 3),
    _row("m", "S2B-LM", "ZSCT [cat]"),
    _row("m", "S2B-LM", "adj-ZSCT [cat]", 2),
    _row("rule speaker", "S2B-LM", "constructivity ZSCT [cat]"),
]
HEADLINE = {"OracleLadder": "gap composition", "S2B-LM": "adj-ZSCT"}


def test_the_spec_headline_heads_and_else_the_first_row() -> None:
    table = headlines(ROWS, HEADLINE, {("m", "S2B-LM"): ["every answer 'same'"]})
    assert list(table) == ["m", "rule speaker"]
    assert table["m"]["OracleLadder"] == (ROWS[1], [])
    assert table["m"]["S2B-LM"] == (ROWS[3], ["every answer 'same'"])
    assert table["rule speaker"] == {"S2B-LM": (ROWS[4], [])}  # no adj-ZSCT: its first row


def test_the_terminal_table_has_a_cell_per_model_and_diagnostic() -> None:
    console = Console(width=200, record=True)
    print_glance(headlines(ROWS, HEADLINE, {("m", "S2B-LM"): ["every answer 'same'"]}), console)
    text = console.export_text()
    assert "gap composition" in text and "75.0 [" in text and "every answer 'same'" in text
    assert text.count("not run") == 1  # the speaker has no OracleLadder headline
