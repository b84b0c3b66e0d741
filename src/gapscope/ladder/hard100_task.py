"""The MATH hard-100 comparator as an Inspect task: one sample per problem, k rollouts as epochs.

Each problem is asked as the diagnostic's C1 probe asks a parent (same system prompt, same
direct-probe template, same budget) and graded by the same verifier cascade
(``ladder_verifier``), so the comparator differs from the diagnostic only in its problems.
``gapscope ladder hard100`` reads the log: pass@1 (mean correctness over the k rollouts) and
pass@k.
"""

from __future__ import annotations

from pathlib import Path

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.solver import generate

from gapscope.ladder.contract import HARD100_TASK
from gapscope.ladder.hard100 import PAPER_ROLLOUTS, load_hard100
from gapscope.ladder.probes import PAPER_MAX_TOKENS, template
from gapscope.ladder.task import ladder_verifier
from gapscope.log_metadata import plain
from gapscope.models import system_first
from gapscope.params import generations, real, whole
from gapscope.task_version import Behaviour


@task(name=HARD100_TASK)
def ladder_math_hard100(
    math500: str,
    ids: str,
    k: int = PAPER_ROLLOUTS,
    max_tokens: int = PAPER_MAX_TOKENS,
    temperature: float = 0.7,
) -> Task:
    """MATH hard-100 (Appendix H): the 100 level-5 MATH500 problems the paper lists.

    Args:
        math500: MATH500 test split, a JSONL path or a Hugging Face dataset id.
        ids: the selection: the release's ``math_hard100_panel_16k.jsonl`` or one id a line.
        k: rollouts per problem (the paper: 8; pass@1 is their mean correctness).
        max_tokens: generation budget per rollout (default: the paper's 16384).
        temperature: sampling temperature of the rollouts.
    """
    k = whole("k", k, 1)
    max_tokens = whole("max_tokens", max_tokens, 1)
    temperature = real("temperature", temperature, 0)
    problems = load_hard100(math500, Path(ids))
    generations(len(problems) * k, f"{len(problems)} problems x k={k}")
    samples = [
        Sample(
            id=p.pid,
            input=template("c1_direct").format(problem=p.problem),
            target=p.answer,
            metadata={"condition": "C1"},
        )
        for p in problems
    ]
    return Task(
        version=BEHAVIOUR.version,
        dataset=MemoryDataset(samples, name="math-hard100"),
        solver=[system_first(template("system")), generate(tool_calls="none")],
        scorer=ladder_verifier(),
        epochs=Epochs(k),
        config=GenerateConfig(max_tokens=max_tokens, temperature=temperature, top_p=1.0),
        metadata=plain({"math500": math500, "ids": ids, "n_problems": len(problems)}),
    )


BEHAVIOUR = Behaviour(
    version=1,
    prompts=template.paths("system", "c1_direct"),
    code=(ladder_math_hard100, ladder_verifier),
)
"""What this task's version covers (:mod:`gapscope.task_version`): bump ``version`` when the
fingerprint test says its prompt, the samples it builds or the scorer changed."""
