"""How many tokens a model reads at most (its context window), where that is known before a
run: a plan compares it with the longest prompt a task will send.

A prompt past the window is not an error a server reports the same way everywhere: gapscope's
engine returns an empty reply with stop reason ``model_length``, a server may truncate or
refuse. Known: the embedded models (their configs' ``max_position_embeddings``), a
``gapscope/hf/<directory>`` checkpoint (its ``config.json``) and the models in Inspect's model
database (``get_model_info``); anything else (a served model under a name of its own) is
unknown, and the plan says so. Nothing heavy is imported and no model is opened.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from gapscope.models.endpoint import is_served

EMBEDDED_WINDOWS: dict[str, int] = {
    "gapscope/embedded": 8192,
    "gapscope/embedded/gemma3-270m": 32768,
}
"""The embedded models' ``max_position_embeddings`` (SmolLM2-135M-Instruct: 8,192, its GGUF's
``llama.context_length``; Gemma 3 270M: 32,768), kept here so a plan need not load torch;
``tests/models/test_window.py`` checks them against the converted checkpoints' configs."""

HF_PREFIX = "gapscope/hf/"


@dataclass(frozen=True)
class Window:
    """A model's context window in tokens (None: unknown) and where that number comes from."""

    tokens: int | None
    source: str


def context_window(model: str) -> Window:
    """The context window of the model string ``model``, or an unknown one saying why."""
    if model in EMBEDDED_WINDOWS:
        return Window(EMBEDDED_WINDOWS[model], "the embedded model's config")
    if model.startswith(HF_PREFIX):
        return _checkpoint_window(Path(model[len(HF_PREFIX) :]).expanduser())
    if not is_served(model):  # Inspect's lookup would open a local provider (hf/ downloads)
        return Window(None, "unknown: a model in this process other than gapscope's")
    return _inspect_window(model)


def _checkpoint_window(directory: Path) -> Window:
    config = directory / "config.json"
    try:
        tokens = json.loads(config.read_text(encoding="utf-8")).get("max_position_embeddings")
    except (OSError, ValueError):
        return Window(None, f"unknown: no readable {config}")
    if not isinstance(tokens, int):
        return Window(None, f"unknown: {config} has no max_position_embeddings")
    return Window(tokens, f"{config} (max_position_embeddings)")


def _inspect_window(model: str) -> Window:
    from inspect_ai.model import get_model_info

    try:
        info = get_model_info(model)
    except Exception:  # an unknown provider or one whose SDK is absent: nothing known
        info = None
    if info is None or not info.context_length:
        return Window(None, "unknown: not in Inspect's model database")
    return Window(int(info.context_length), "Inspect's model database")
