"""The parity task: one sample per number, the model answers "even" or "odd"."""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import exact

from gapscope.models import check_options, steered_generate
from gapscope.task_version import Behaviour

TASK = "parity"
"""The task's name in its logs: how gapscope finds the reader of a parity log."""
PROMPT = "Is {n} even or odd? Answer with one word: even or odd."


@task(name=TASK)
def parity(
    limit: int = 10, max_tokens: int = 16, steer: str | None = None, alpha: float = 0.0
) -> Task:
    """The numbers 1..``limit``, each a sample with its parity as the target.

    The answer must be the word itself (``exact()``: case and punctuation aside): a substring
    match would pass "not even, odd" for "even". ``steer``/``alpha`` add a direction to the
    model's residual stream (``gapscope run steer --diagnostic parity``); the direction's
    provenance goes in the log, where the report reads it back.
    """
    samples = [
        Sample(id=str(n), input=PROMPT.format(n=n), target="even" if n % 2 == 0 else "odd")
        for n in range(1, limit + 1)
    ]
    return Task(
        version=BEHAVIOUR.version,
        dataset=MemoryDataset(samples, name="parity"),
        solver=steered_generate(steer, alpha),
        scorer=exact(),
        config=GenerateConfig(max_tokens=max_tokens),
        metadata={"steering": check_options(steer, alpha)},
    )


BEHAVIOUR = Behaviour(version=1, texts=(PROMPT,), code=(parity,))
"""What this task's version covers (:mod:`gapscope.task_version`): bump ``version`` when the
fingerprint test says its prompt or its task changed."""
