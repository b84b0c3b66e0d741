"""The first table's choice of headline: the spec's headline metric (a prefix: S2B's name
their preset) wherever the model has it, else the diagnostic's first row; warnings on the
cell of the model and diagnostic they belong to; the verdict of the chosen row only."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console
from typer.testing import CliRunner

from gapscope.analysis.glance import Cell, glance_dict, headlines, print_glance
from gapscope.analysis.profile import GapRow
from gapscope.app.main import app


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
    assert table["m"]["OracleLadder"] == Cell(ROWS[1])
    assert table["m"]["S2B-LM"] == Cell(ROWS[3], ("every answer 'same'",))
    assert table["rule speaker"] == {"S2B-LM": Cell(ROWS[4])}  # no adj-ZSCT: its first row


def test_the_terminal_table_has_a_cell_per_model_and_diagnostic() -> None:
    console = Console(width=200, record=True)
    print_glance(headlines(ROWS, HEADLINE, {("m", "S2B-LM"): ["every answer 'same'"]}), console)
    text = console.export_text()
    assert "gap composition" in text and "75.0 [" in text and "every answer 'same'" in text
    assert text.count("not run") == 1  # the speaker has no OracleLadder headline


def test_each_cell_has_the_verdict_of_its_headline_row_in_the_terminal_and_json() -> None:
    asked: list[str] = []

    def verdict_of(row: GapRow) -> str:
        asked.append(row.metric)
        return f"verdict on {row.metric}"

    table = headlines(ROWS, HEADLINE, {("m", "S2B-LM"): ["every answer 'same'"]}, verdict_of)
    assert sorted(asked) == ["adj-ZSCT [cat]", "constructivity ZSCT [cat]", "gap composition"]
    assert table["m"]["OracleLadder"].verdict == "verdict on gap composition"
    console = Console(width=200, record=True)
    print_glance(table, console)
    assert "verdict on adj-ZSCT [cat]" in console.export_text()
    cell = glance_dict(table)["m"]["S2B-LM"]
    assert cell["metric"] == "adj-ZSCT [cat]" and cell["value"] == 50.0 and cell["n"] == 4
    assert cell["verdict"] == "verdict on adj-ZSCT [cat]"
    assert cell["warnings"] == ["every answer 'same'"]


def test_reports_first_table_says_each_built_in_headline_in_words(
    logs: dict[str, Path], tmp_path: Path
) -> None:
    """Real logs: the rule listener decodes above chance, the random one is at chance (its
    interval covers it), and the student that answers 0 everywhere has its gap named."""
    args = ["report", *(str(p.parent) for p in logs.values()), "--out", str(tmp_path / "r.html")]
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    glance = json.loads(result.stdout)["details"]["glance"]
    assert glance["rule listener"]["S2B-LM"]["verdict"] == "above chance (CI excludes 0)"
    assert glance["random listener"]["S2B-LM"]["verdict"] == "at chance (CI covers 0)"
    (student,) = (cells for model, cells in glance.items() if "listener" not in model)
    assert student["OracleLadder"]["metric"] == "gap composition"
    assert student["OracleLadder"]["verdict"] == "capability gap on 2 of 2 families"
    assert next(iter(glance)) not in ("rule listener", "random listener")  # under test first
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert '<span class="verdict">capability gap on 2 of 2 families</span>' in page
