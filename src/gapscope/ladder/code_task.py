"""The code pilot as an Inspect task: one sample per (problem, condition), k epochs.

The scorer runs each attempt's program against the problem's tests in the sandbox
(:mod:`gapscope.ladder.sandbox`): a fresh, limited, isolated process per attempt. Attempts run
on a bounded thread pool (``workers``), each thread only waiting on its child process. The
Lean job runner is not used: it schedules Lean checks on REPLs kept warm per header, and the
verifier's pool reuses warm workers, while an untrusted program must never share a process
with the next one; what is left to schedule is a bounded number of child processes.
"""

from __future__ import annotations

import asyncio
import os
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig
from inspect_ai.scorer import (
    CORRECT,
    INCORRECT,
    NOANSWER,
    Score,
    Scorer,
    Target,
    accuracy,
    grouped,
    scorer,
)
from inspect_ai.solver import TaskState, generate

from gapscope.ladder.code import (
    CODE_CONDITIONS,
    CodeCondition,
    CodeProblem,
    check_helpers,
    code_prompt,
    extract_program,
    load_bundled_code,
    load_code_problems,
    program_to_run,
)
from gapscope.ladder.contract import (
    CODE_TASK,
    CodeProbeMetadata,
    CodeRunMetadata,
    CodeVerdictMetadata,
)
from gapscope.ladder.probes import template
from gapscope.ladder.sandbox import Limits, isolation, run_tests
from gapscope.log_metadata import plain
from gapscope.params import choices


def parse_code_conditions(spec: str) -> tuple[CodeCondition, ...]:
    """``all`` or a comma list such as ``no-help,verified-helpers``."""
    return choices("condition(s)", spec, CodeCondition, {"all": CODE_CONDITIONS})


def usable_problems(
    problems: list[CodeProblem], conditions: tuple[CodeCondition, ...], limits: Limits
) -> tuple[list[CodeProblem], list[str]]:
    """The problems every condition can be asked of, and why each other one was left out.

    A helper condition needs helpers, and "verified" helpers must pass their own tests here,
    in the same sandbox the attempts run in; a problem failing either is skipped, not run
    with help it does not have.
    """
    helped = any(c is not CodeCondition.NO_HELP for c in conditions)
    kept: list[CodeProblem] = []
    skipped: list[str] = []
    for problem in problems:
        if helped and not problem.helpers:
            skipped.append(f"{problem.pid}: no helper functions for the helper conditions")
            continue
        if CodeCondition.VERIFIED_HELPERS in conditions:
            failing = [
                f"{n} ({r.status}: {r.detail})"
                for n, r in check_helpers(problem, limits)
                if not r.solved
            ]
            if failing:
                skipped.append(f"{problem.pid}: helpers fail their tests: {'; '.join(failing)}")
                continue
        kept.append(problem)
    return kept, skipped


@task(name=CODE_TASK)
def ladder_code(
    problems: str = "bundled",
    k: int = 8,
    conditions: str = "all",
    limit: int | None = None,
    time_limit: float = 10.0,
    memory_mb: int = 1024,
    workers: int | None = None,
    max_tokens: int = 4096,
    temperature: float = 0.7,
) -> Task:
    """The code-generation pilot: no help, a helper plan, verified helpers; k attempts each.

    Args:
        problems: ``bundled`` (our ten problems), or a JSONL path / Hub id of problems in our
            format or LiveCodeBench's.
        k: attempts per (problem, condition).
        conditions: ``all`` or a comma list of no-help, helper-plan, verified-helpers.
        limit: only the first ``limit`` problems.
        time_limit: wall-clock seconds of one attempt's test run (it is killed past it).
        memory_mb: address-space limit of one attempt.
        workers: attempts tested at once (default: the CPU count).
        max_tokens: generation budget per attempt.
        temperature: sampling temperature of the attempts.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    chosen_conditions = parse_code_conditions(conditions)
    loaded = load_bundled_code() if problems == "bundled" else load_code_problems(problems)
    limits = Limits(time_s=time_limit, cpu_s=max(1, int(time_limit)), memory_mb=memory_mb)
    candidates = loaded.problems[:limit] if limit is not None else loaded.problems
    chosen, skipped = usable_problems(candidates, chosen_conditions, limits)
    notes = [str(p) for p in loaded.skipped] + skipped
    if not chosen:
        raise ValueError(f"no usable problem in {problems!r}: {'; '.join(notes) or 'empty'}")
    samples = [
        Sample(
            id=f"{p.pid}:{c.value}",
            input=[
                ChatMessageSystem(content=template("code_system")),
                ChatMessageUser(content=code_prompt(p, c)),
            ],
            metadata=plain(CodeProbeMetadata(pid=p.pid, condition=c.value)),
        )
        for p in chosen
        for c in chosen_conditions
    ]
    return Task(
        dataset=MemoryDataset(samples, name=f"ladder-code-{problems}"),
        solver=generate(tool_calls="none"),  # no tools offered: a tool call ends the turn
        scorer=code_tests({p.pid: p for p in chosen}, limits, workers or os.cpu_count() or 1),
        epochs=Epochs(k),
        config=GenerateConfig(max_tokens=max_tokens, temperature=temperature, top_p=1.0),
        metadata=plain(
            CodeRunMetadata(
                problems=problems,
                n_problems=len(chosen),
                load_problems=notes,
                isolation=isolation().value,
                limits=asdict(limits),
            )
        ),
    )


@scorer(metrics=[grouped(accuracy(), "condition")])
def code_tests(problems: dict[str, CodeProblem], limits: Limits, workers: int) -> Scorer:
    """Pass when the attempt's program passes every test; NOANSWER when it gave no code block.

    The score's ``answer`` is how the run ended (passed, failed, timeout, memory, blocked...),
    its explanation the detail; a killed attempt is one failed attempt and the run goes on.
    """
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="gapscope-code")

    async def score(state: TaskState, target: Target) -> Score:
        problem = problems[str(state.metadata["pid"])]
        condition = CodeCondition(state.metadata["condition"])
        program = extract_program(state.output.completion)
        if program is None:
            return Score(value=NOANSWER, answer="no-code", explanation="no fenced code block")
        result = await asyncio.get_running_loop().run_in_executor(
            pool,
            run_tests,
            program_to_run(problem, condition, program),
            list(problem.tests),
            problem.entry,
            limits,
        )
        return Score(
            value=CORRECT if result.solved else INCORRECT,
            answer=result.status.value,
            explanation=result.detail or f"{result.passed}/{result.total} tests passed",
            metadata=plain(
                CodeVerdictMetadata(
                    status=result.status.value,
                    passed=result.passed,
                    total=result.total,
                    isolation=result.isolation.value,
                    seconds=result.seconds,
                )
            ),
        )

    weakref.finalize(score, pool.shutdown, wait=False)
    return score
