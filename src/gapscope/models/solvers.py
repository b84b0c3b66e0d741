"""Solvers the diagnostics' tasks share.

:func:`system_first` puts the task's fixed system prompt in front of the sample's own turn at
solve time. A sample's ``input`` is then just the problem, which is what Inspect's viewer shows
in its INPUT column (a system prompt there repeats on every row and hides the problem); the
model receives exactly the same messages as when the system prompt was part of the input.
Unlike Inspect's ``system_message``, the text is not a format template: prompts with braces
(``\\boxed{}``) go through untouched.
"""

from __future__ import annotations

from inspect_ai.model import ChatMessageSystem
from inspect_ai.solver import Generate, Solver, TaskState, solver


@solver
def system_first(text: str) -> Solver:
    """Insert ``text`` as the system message before every other message of the sample."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.messages.insert(0, ChatMessageSystem(content=text))
        return state

    return solve
