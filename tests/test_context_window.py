"""The plan warns when a task's prompts will outgrow a model's context window, where the window
is known, and says where it is not."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gapscope.app.context import plan_context
from gapscope.app.main import app
from gapscope.app.study import WINDOW_CHARS_PER_TOKEN, PlanRow, plan_of
from gapscope.models import context_window
from gapscope.models.window import EMBEDDED_WINDOWS
from gapscope.s2b import s2b_lm
from gapscope.s2b.config import resolve
from gapscope.s2b.episode import build_episode
from gapscope.s2b.task import call_prompt_chars

runner = CliRunner()


def _row(model: str, label: str, longest: int, generations: int = 10) -> PlanRow:
    return PlanRow(model, "s2b", label, 1, generations, 64, 0, longest_prompt_tokens=longest)


def test_a_task_past_a_known_window_is_named_with_its_length_and_the_window() -> None:
    context = plan_context(
        [
            _row("gapscope/embedded", "cat-10shot (lm listener)", 21_230),
            _row("gapscope/embedded", "demo (lm listener)", 2_990),
            _row("none", "cat-10shot (rule listener)", 0, generations=0),
        ]
    )
    assert context["over"] == [
        {
            "model": "gapscope/embedded",
            "diagnostic": "s2b",
            "label": "cat-10shot (lm listener)",
            "prompt_tokens": 21_230,
            "window": 8192,
        }
    ]
    (line,) = context["lines"]
    assert line.startswith(
        "warning: s2b cat-10shot (lm listener) sends prompts of about 21,230 tokens, past"
        " gapscope/embedded's context window of 8,192"
    )
    assert set(context["windows"]) == {"gapscope/embedded"}  # the reference players call none


def test_an_unknown_window_is_said_once_per_model_with_its_longest_prompt() -> None:
    context = plan_context(
        [
            _row("openai-api/vllm/SmolLM2", "demo (lm listener)", 2_990),
            _row("openai-api/vllm/SmolLM2", "cat-10shot (lm listener)", 21_230),
        ]
    )
    assert context["over"] == []
    assert context["lines"] == [
        "context: openai-api/vllm/SmolLM2: window unknown: not in Inspect's model database;"
        " its longest prompt is about 21,230 tokens (s2b cat-10shot (lm listener))"
    ]
    assert context["windows"]["openai-api/vllm/SmolLM2"]["tokens"] is None


def test_windows_come_from_inspects_database_and_a_checkpoints_config(tmp_path: Path) -> None:
    assert context_window("openai/gpt-4o").tokens == 128_000
    (tmp_path / "config.json").write_text(json.dumps({"max_position_embeddings": 2048}))
    assert context_window(f"gapscope/hf/{tmp_path}").tokens == 2048
    assert context_window(f"gapscope/hf/{tmp_path / 'absent'}").tokens is None
    assert context_window("hf/HuggingFaceTB/SmolLM2-135M-Instruct").tokens is None  # offline


def test_the_s2b_plan_row_holds_the_longest_call_of_any_episode() -> None:
    task = s2b_lm(preset="cat-10shot", seeds=3)
    config = resolve("cat-10shot")
    calls = [
        call_prompt_chars(build_episode(config, seed), "lm", "listener", 256) for seed in range(3)
    ]
    longest = max(max(c) for c in calls)
    assert (task.metadata or {})["longest_prompt_chars"] == longest
    assert all(c[-1] == max(c) for c in calls)  # each call re-reads the transcript so far
    row = plan_of(task, "gapscope/embedded", "s2b", "cat-10shot (lm listener)")
    assert row.longest_prompt_tokens == math.ceil(longest / WINDOW_CHARS_PER_TOKEN)
    assert plan_of(task, "none", "s2b", "x").longest_prompt_tokens == 0


def test_profile_dry_run_warns_that_cat_10shot_outgrows_smollm2(tmp_path: Path) -> None:
    args = ["profile", "--diagnostics", "s2b", "--dry-run", "--log-dir", str(tmp_path)]
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    context = json.loads(result.stdout)["details"]["plan"]["context"]
    over = {(o["label"], o["window"]) for o in context["over"]}
    assert ("cat-10shot (lm listener)", 8192) in over
    assert all(o["prompt_tokens"] > 8192 for o in context["over"])
    printed = runner.invoke(app, args)
    assert printed.exit_code == 0, printed.output
    words = " ".join(printed.output.split())
    assert "warning: s2b cat-10shot (lm listener) sends prompts of about" in words
    assert "past gapscope/embedded's context window of 8,192" in words


@pytest.mark.parametrize("model", sorted(EMBEDDED_WINDOWS))
def test_the_embedded_windows_are_the_checkpoints_own(model: str) -> None:
    """The table spares a plan loading torch; the converted checkpoint's config is the truth."""
    from gapscope.models.embedded import embedded_checkpoint, find_embedded
    from gapscope.models.inspect_api import EMBEDDED_SOURCE

    name = model.removeprefix("gapscope/").removeprefix(EMBEDDED_SOURCE).lstrip("/")
    embedded = find_embedded(name)
    try:
        embedded.version()
    except Exception as exc:  # the package that ships it is not installed here
        pytest.skip(str(exc))
    config = json.loads((embedded_checkpoint(embedded) / "config.json").read_text())
    assert config["max_position_embeddings"] == EMBEDDED_WINDOWS[model]
