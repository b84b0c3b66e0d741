"""The teacher-compilation Inspect task: one sample per parent problem.

The solver asks the teacher for a family, validates it, and on rejection tells the teacher
what failed and asks again, at most ``max_attempts`` times. The sample store keeps the
accepted family (or the last failure's stage) so the CLI can write families and the funnel.
"""

from __future__ import annotations

from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageAssistant, ChatMessageUser, GenerateConfig, get_model
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Scorer, Target, accuracy, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from gapscope.ladder import compile as teacher_compilation
from gapscope.ladder.compile import (
    CompileError,
    TeacherProblem,
    build_family,
    load_problems,
    parse_reply,
    retry_prompt,
    teacher_prompt,
)
from gapscope.ladder.contract import COMPILE_TASK
from gapscope.ladder.problem_sets import load_problem_set
from gapscope.params import generations, whole
from gapscope.task_version import Behaviour

TEACHER_TEMPERATURE = 0.0
"""Greedy teacher: a family is compiled once (retries get the error as feedback), so the
task sends temperature 0 itself instead of inheriting a server's sampling default."""


@task(name=COMPILE_TASK)
def ladder_compile(
    problems: str, max_attempts: int = 3, max_tokens: int = 4096, problem_set: str | None = None
) -> Task:
    """Compile milestone families for the problems of a JSONL file with the task's model.

    ``problem_set`` (``math500``, ``aime2024``, ``aime2025``) reads ``problems`` in the
    fields of that replication set's copies (a JSONL path, else a Hub dataset id) instead of
    the ``problem``/``answer`` records of :func:`~gapscope.ladder.compile.load_problems`.
    """
    max_attempts = whole("max_attempts", max_attempts, 1)
    max_tokens = whole("max_tokens", max_tokens, 1)
    if problem_set is None:
        loaded, errors = load_problems(Path(problems))
    else:
        loaded, errors = load_problem_set(problem_set, problems)
    if not loaded:
        raise ValueError(f"no valid problem in {problems}: {'; '.join(errors) or 'empty file'}")
    generations(len(loaded) * max_attempts, f"{len(loaded)} problems x max_attempts={max_attempts}")
    samples = [
        Sample(
            id=p.pid,
            input=teacher_prompt(p),
            metadata={"problem": p.problem, "answer": p.answer, "solution": p.solution},
        )
        for p in loaded
    ]
    return Task(
        version=BEHAVIOUR.version,
        dataset=MemoryDataset(samples, name="ladder-compile"),
        solver=compile_family(max_attempts),
        scorer=family_kept(),
        config=GenerateConfig(max_tokens=max_tokens, temperature=TEACHER_TEMPERATURE, top_p=1.0),
        metadata={"problems": problems, "problem_set": problem_set, "load_errors": errors},
    )


@solver
def compile_family(max_attempts: int) -> Solver:
    """Ask, validate, and regenerate on rejection (bounded)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        problem = TeacherProblem(
            pid=str(state.sample_id),
            problem=state.metadata["problem"],
            answer=state.metadata["answer"],
            solution=state.metadata["solution"],
        )
        failures: list[dict[str, str]] = []
        for _ in range(max_attempts):
            output = await get_model().generate(state.messages)
            state.messages.append(ChatMessageAssistant(content=output.completion))
            try:
                family = build_family(problem, parse_reply(output.completion))
            except CompileError as error:
                failures.append({"stage": error.stage.value, "reason": str(error)})
                state.messages.append(ChatMessageUser(content=retry_prompt(error)))
                continue
            state.store.set("family", family.to_dict())
            break
        state.store.set("failures", failures)
        return state

    return solve


@scorer(metrics=[accuracy()])
def family_kept() -> Scorer:
    """CORRECT when a valid, leak-free family was compiled."""

    async def score(state: TaskState, target: Target) -> Score:
        failures: list[dict[str, str]] = state.store.get("failures", [])
        kept = state.store.get("family") is not None
        return Score(
            value=CORRECT if kept else INCORRECT,
            explanation=f"{len(failures)} rejected attempt(s)"
            + (f"; last: {failures[-1]['reason']}" if failures else ""),
        )

    return score


BEHAVIOUR = Behaviour(
    version=1,
    prompts=teacher_compilation.template.paths("teacher", "teacher_retry"),
    code=(teacher_compilation, compile_family, family_kept),
)
"""What this task's version covers (:mod:`gapscope.task_version`): bump ``version`` when the
fingerprint test says the teacher's prompts, the compilation or the scorer changed."""
