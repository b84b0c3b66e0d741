"""Solvers the diagnostics' tasks share.

:func:`system_first` puts the task's fixed system prompt in front of the sample's own turn at
solve time. A sample's ``input`` is then just the problem, which is what Inspect's viewer shows
in its INPUT column (a system prompt there repeats on every row and hides the problem); the
model receives exactly the same messages as when the system prompt was part of the input.
Unlike Inspect's ``system_message``, the text is not a format template: prompts with braces
(``\\boxed{}``) go through untouched.

:func:`within_run_cap` is for a solver that passes its own ``GenerateConfig`` per call (an
S2B-LM episode): it keeps that call under the run's reply cap.
"""

from __future__ import annotations

from inspect_ai.model import ChatMessageSystem, GenerateConfig
from inspect_ai.solver import Generate, Solver, TaskState, solver


@solver
def system_first(text: str) -> Solver:
    """Insert ``text`` as the system message before every other message of the sample."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.messages.insert(0, ChatMessageSystem(content=text))
        return state

    return solve


def within_run_cap(config: GenerateConfig) -> GenerateConfig:
    """``config`` with its ``max_tokens`` no higher than the running task's (its config merged
    with the eval's, e.g. ``gapscope profile --max-tokens``).

    Inspect merges a call's own config last (``Model._resolve_config``), so a per-call
    ``max_tokens`` would replace the run's cap; the running config is Inspect's
    ``active_generate_config`` (``inspect_ai.model._generate_config``, set for each task by
    ``init_active_model``; not exported, hence the private import)."""
    from inspect_ai.model._generate_config import active_generate_config

    cap = active_generate_config().max_tokens
    if cap is None or (config.max_tokens is not None and config.max_tokens <= cap):
        return config
    return config.merge(GenerateConfig(max_tokens=cap))
