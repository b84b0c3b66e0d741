"""The plan's check of prompt lengths against each model's context window.

An S2B-LM cat-10shot episode re-reads its whole transcript at every game, so its last prompts
outgrow SmolLM2's 8,192-token window: those games then get empty ``model_length`` replies. The
plan says so before anything is spent: for each task whose longest prompt
(``PlanRow.longest_prompt_tokens``) passes its model's window, a warning naming the task, the
estimated prompt length and the window; for each model whose window is unknown, one line
saying so beside its longest prompt.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol


class PlanRow(Protocol):
    """What the check reads of a plan row (``gapscope.app.study.PlanRow``, which calls this
    module: a protocol keeps the two modules out of an import cycle)."""

    @property
    def model(self) -> str: ...
    @property
    def diagnostic(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def generations(self) -> int: ...
    @property
    def longest_prompt_tokens(self) -> int: ...


def plan_context(rows: Iterable[PlanRow]) -> dict[str, Any]:
    """The plan's ``context`` entry: per model that generates its window (``tokens``, None when
    unknown, and ``source``) and its longest prompt; ``over``: the tasks whose longest prompt
    passes the window; ``lines``: what the plan prints."""
    from gapscope.models import context_window

    calling = [row for row in rows if row.generations]
    windows: dict[str, Any] = {}
    over: list[dict[str, Any]] = []
    lines: list[str] = []
    for model in dict.fromkeys(row.model for row in calling):
        window = context_window(model)
        mine = [row for row in calling if row.model == model]
        longest = max(mine, key=lambda row: row.longest_prompt_tokens)
        windows[model] = {
            "tokens": window.tokens,
            "source": window.source,
            "longest_prompt_tokens": longest.longest_prompt_tokens,
        }
        if window.tokens is None:
            lines.append(
                f"context: {model}: window {window.source}; its longest prompt is about"
                f" {longest.longest_prompt_tokens:,} tokens ({_task(longest)})"
            )
            continue
        for row in mine:
            if row.longest_prompt_tokens > window.tokens:
                over.append(
                    {
                        "model": model,
                        "diagnostic": row.diagnostic,
                        "label": row.label,
                        "prompt_tokens": row.longest_prompt_tokens,
                        "window": window.tokens,
                    }
                )
                lines.append(
                    f"warning: {_task(row)} sends prompts of about"
                    f" {row.longest_prompt_tokens:,} tokens, past {model}'s context window of"
                    f" {window.tokens:,} ({window.source}): what does not fit gets no reply"
                    " (gapscope's engine stops at once, stop reason model_length) or is cut by"
                    " the server. Lower the task's budget or use a model with a longer window."
                )
    return {"windows": windows, "over": over, "lines": lines}


def _task(row: PlanRow) -> str:
    return f"{row.diagnostic} {row.label}"
