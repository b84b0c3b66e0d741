"""Receptivity beside constructivity: four scripted models in both seats, one report."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessage
from typer.testing import CliRunner

from gapscope.analysis.diagnostics import load_all
from gapscope.analysis.s2b import S2BRunSummary, axes
from gapscope.models.scripted import script
from gapscope.s2b.config import resolve
from gapscope.s2b.domains import CATEGORY_REGISTRY
from gapscope.s2b.episode import build_episode
from gapscope.s2b.prompting import game_text
from gapscope.s2b.task import s2b_lm

Reply = Callable[[list[ChatMessage]], str]
EPISODE = build_episode(resolve("demo"), 0)
TRUTH = {game_text(EPISODE, g): g.same for g in EPISODE.games}
INDEX = {item: i for items in CATEGORY_REGISTRY.values() for i, item in enumerate(items)}


def _oracle(messages: list[ChatMessage]) -> str:
    same = next(v for k, v in TRUTH.items() if messages[-1].text.endswith(k))
    return f"Answer: {'same' if same else 'different'}"


def _always_same(messages: list[ChatMessage]) -> str:
    return "Answer: same"


def _own_code(messages: list[ChatMessage]) -> str:
    target = re.findall(r"Your target: \[(.*?)\]", messages[-1].text)[-1].split(", ")
    return "Message: [" + ", ".join(str(INDEX[w] + 1) for w in target) + "]"


def _mute(messages: list[ChatMessage]) -> str:
    return "no idea"


MODELS: dict[str, tuple[Reply, Reply]] = {
    # name: (as listener, as speaker) -> (receptivity, constructivity) adj-ZSCT
    "both": (_oracle, _own_code),  # (100, 100)
    "neither": (_always_same, _mute),  # (0, 0)
    "receptive": (_oracle, _mute),  # (100, 0)
    "constructive": (_always_same, _own_code),  # (0, 100): the cell the claim forbids
}


def _seat(listener: Reply, speaker: Reply) -> Reply:
    def reply(messages: list[ChatMessage]) -> str:
        is_speaker = "You are the speaker" in messages[0].text
        return (speaker if is_speaker else listener)(messages)

    return reply


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("axes")
    for name, (listener, speaker) in MODELS.items():
        model = script(f"axes-{name}", _seat(listener, speaker))
        for role in ("listener", "speaker"):
            (log,) = inspect_eval(
                s2b_lm(preset="demo", seeds=1, role=role),
                model=model,
                log_dir=str(root / name / role),
                display="none",
            )
            assert log.status == "success", log.error
    return root


def test_axes_pair_each_models_two_seats(logs: Path) -> None:
    summaries = [x.summary for x in load_all([logs]).logs if isinstance(x.summary, S2BRunSummary)]
    pairs = {p.model: p for p in axes(summaries)}
    assert set(pairs) == {f"scripted/axes-{name}" for name in MODELS}
    both = pairs["scripted/axes-both"]
    assert (both.receptivity.value, both.constructivity.value) == (100.0, 100.0)
    assert both.receptivity.metric == "adj-ZSCT [demo]"
    assert both.constructivity.metric == "constructivity adj-ZSCT [demo]"
    constructive = pairs["scripted/axes-constructive"]
    assert (constructive.receptivity.value, constructive.constructivity.value) == (0.0, 100.0)
    assert constructive.language["posdis"] > 0.8
    assert pairs["scripted/axes-neither"].language == {"topsim": 0, "posdis": 0, "bosdis": 0}


def test_report_shows_both_axes_side_by_side_with_the_quadrant_scatter(
    logs: Path, tmp_path: Path
) -> None:
    from gapscope.app.main import app

    out = tmp_path / "report.html"
    result = CliRunner(env={"COLUMNS": "400"}).invoke(
        app, ["report", str(logs), "--out", str(out), "--json"]
    )
    assert result.exit_code == 0, result.output
    envelope = json.loads(result.stdout)
    assert "s2b_axes" in envelope["details"]["figures"]
    metrics = {(r["model"], r["metric"]): r for r in envelope["summary"]}
    for metric in ("constructivity ZSCT [demo]", "topsim [demo]", "posdis [demo]", "bosdis [demo]"):
        assert ("scripted/axes-both", metric) in metrics
    assert metrics[("scripted/axes-neither", "malformed [demo]")]["value"] == 100.0
    page = out.read_text(encoding="utf-8")
    section = page[page.index("<h2>Receptivity and constructivity</h2>") :]
    section = section[: section.index("</table>")]
    assert section.count("<tr>") == 1 + len(MODELS)  # header + one row per model
    # the forbidden cell (high constructivity, low receptivity) holds the one model put there
    svg = Path(envelope["details"]["figures"]["s2b_axes"][1]).read_text(encoding="utf-8")
    assert "forbidden = 1 of n = 4" in svg


def test_one_model_is_drawn_without_a_quadrant_test_and_says_why(logs: Path) -> None:
    from gapscope.analysis.figures import receptivity_constructivity

    figure = receptivity_constructivity(load_all([logs / "both"]).logs)
    assert figure is not None and figure.stem == "s2b_axes"
    title = figure.figure.axes[0].get_title()
    assert "quadrant test undefined: need at least 2 models, got 1" in title.replace("\n", " ")
    assert receptivity_constructivity(load_all([logs / "both" / "speaker"]).logs) is None


def test_the_profile_table_prints_the_preset_of_every_row(logs: Path) -> None:
    from gapscope.analysis.literal import LiteralConsole
    from gapscope.analysis.terminal import print_rows

    console = LiteralConsole(record=True, width=200)
    print_rows([r for x in load_all([logs / "both"]).logs for r in x.summary.rows()], console)
    text = console.export_text()
    assert "constructivity adj-ZSCT [demo]" in text
    assert "topsim [demo]" in text and " ZSCT [demo]" in text
