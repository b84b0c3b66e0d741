"""Games whose replies the context window cut (stop reason ``model_length``) are counted on
the model's S2B-LM cell of the report's first table and in ``--json``: part of that number
is the window's, not the model's. A real run: a scripted model whose replies stop at the
window once an episode's conversation passes eight messages."""

from __future__ import annotations

import json
from pathlib import Path

from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessage, ModelOutput
from typer.testing import CliRunner

from gapscope.analysis.s2b import summarize
from gapscope.app.main import app
from gapscope.models.scripted import script
from gapscope.s2b.task import s2b_lm

runner = CliRunner(env={"COLUMNS": "200"})
WINDOW = 8
"""Messages a conversation may hold before the scripted model's window is full."""


def _short_window(messages: list[ChatMessage]) -> str | ModelOutput:
    if len(messages) > WINDOW:
        return ModelOutput.from_content("window", "", stop_reason="model_length")
    return "Answer: same"


def test_games_cut_by_the_context_window_are_counted_on_the_models_cell(tmp_path: Path) -> None:
    model = script("window", _short_window)
    task = s2b_lm(preset="demo", seeds=2, listener="lm")
    (log,) = inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success", log.error
    summary = summarize(log)
    games = sum(
        g["stop_reason"] == "model_length"
        for sample in log.samples or []
        for g in sample.store.get("games", [])
    )
    assert games > 2 and summary.cut == (games, 2)
    counted = (
        f"{games} games in 2 of 2 episodes cut by the context window: their empty replies "
        "count as wrong, so part of this number is the window's, not the model's"
    )
    assert summary.warnings == [counted]
    assert summary.to_dict()["context_cut"] == {"games": games, "episodes": 2, "of": 2}

    out = tmp_path / "r.html"
    result = runner.invoke(app, ["report", str(tmp_path / "logs"), "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    envelope = json.loads(result.stdout)
    cell = envelope["details"]["glance"][model]["S2B-LM"]
    assert cell["metric"] == "adj-ZSCT [demo]" and counted in cell["warnings"]
    assert cell["verdict"]  # the cell says its number in words too
    # the count opens the notes; the per-seed lines follow it
    notes = envelope["notes"]
    assert notes[0] == f"S2B-LM, {model}: {counted}"
    assert [n for n in notes if "seed 0:" in n or "seed 1:" in n] == notes[1:3]
    glance = out.read_text(encoding="utf-8").split("<h2>Gap profile</h2>")[0]
    assert f"{games} games in 2 of 2 episodes cut by the context window" in glance
    assert "seed 0:" not in glance  # the per-seed lines stay in the notes
