"""The diagnostics' own prompts, captured from their Inspect tasks: the calibration set of the
weight formats (``gapscope.models.calibration``) and the CPU engine benchmark's workload.

The tasks run on a scripted model that answers at once (an S2B decision, a boxed number), which
records every conversation it is sent: S2B-LM listener turns of the ``demo`` preset (two
episodes, each turn carrying the ones before it) and OracleLadder probes of two bundled
families (Stage 0, C1-C3 and the controls). Same seeds, same prompts, byte for byte.
"""

from __future__ import annotations

import tempfile

from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessage

from gapscope.ladder.task import oracle_ladder
from gapscope.models.scripted import REQUESTS, script
from gapscope.s2b.task import s2b_lm

Conversation = tuple[dict[str, str], ...]
RECORDER = "task-prompts"


def _instant(messages: list[ChatMessage]) -> str:
    last = messages[-1].text
    return "Answer: same" if "Game " in last or "Sync round" in last else "\\boxed{1}"


def task_prompts() -> list[Conversation]:
    """Every conversation the S2B-LM and OracleLadder tasks send, in the order sent (one
    sample at a time, so the order is fixed): 28 conversations."""
    model = script(RECORDER, _instant)
    with tempfile.TemporaryDirectory() as log_dir:
        for task in (
            s2b_lm(preset="demo", seeds=2, coverage=1),
            oracle_ladder(families="bundled", k=1, limit=2),
        ):
            (log,) = inspect_eval(task, model=model, log_dir=log_dir, display="none", max_samples=1)
            if log.status != "success":
                raise RuntimeError(f"capturing the task prompts failed: {log.error}")
    return [
        tuple({"role": message.role, "content": message.text} for message in conversation)
        for conversation in REQUESTS[RECORDER]
    ]
