"""The code pilot as an Inspect task: one sample per (problem, condition), k epochs.

The scorer runs each attempt's program against the problem's tests in the sandbox
(:mod:`gapscope.ladder.sandbox`): a fresh, limited, isolated process per attempt, judged by
this process. Without a working sandbox the task refuses to build (before any model call)
unless ``allow_unsandboxed``; ``sandbox="docker"`` (any Inspect sandbox type) runs attempts
in Inspect's sandboxes instead (:mod:`gapscope.ladder.inspect_sandbox`). Local attempts run
on a bounded thread pool (``workers``), each thread only waiting on its child process. The
Lean job runner is not used: it schedules Lean checks on REPLs kept warm per header, and the
verifier's pool reuses warm workers, while an untrusted program must never share a process
with the next one; what is left to schedule is a bounded number of child processes.
"""

from __future__ import annotations

import asyncio
import functools
import os
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path

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

from gapscope.ladder import code as code_pilot
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
from gapscope.ladder.inspect_sandbox import InspectSandbox, run_in_sandbox
from gapscope.ladder.probes import template
from gapscope.ladder.sandbox import Isolation, Limits, RunResult, local_layer, run_tests
from gapscope.log_metadata import plain
from gapscope.params import choices
from gapscope.task_version import Behaviour


def parse_code_conditions(spec: str) -> tuple[CodeCondition, ...]:
    """``all`` or a comma list such as ``no-help,verified-helpers``."""
    return choices("condition(s)", spec, CodeCondition, {"all": CODE_CONDITIONS})


LOCAL_SANDBOX = "bwrap"


def usable_problems(
    problems: list[CodeProblem],
    conditions: tuple[CodeCondition, ...],
    limits: Limits,
    layer: Isolation | None = None,
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
                for n, r in check_helpers(problem, limits, layer)
                if not r.solved
            ]
            if failing:
                skipped.append(f"{problem.pid}: helpers fail their tests: {'; '.join(failing)}")
                continue
        kept.append(problem)
    return kept, skipped


def placement(
    sandbox: str, allow_unsandboxed: bool, conditions: tuple[CodeCondition, ...]
) -> tuple[Isolation | None, InspectSandbox | None]:
    """Where code runs: the local layer (attempts under ``bwrap``, and verified helpers'
    checks always) and the Inspect sandbox attempts go to instead. Decided before any model
    call; SandboxUnavailable where it would be unsandboxed and that was not allowed."""
    remote = None if sandbox == LOCAL_SANDBOX else InspectSandbox.parse(sandbox)
    if remote is not None:
        remote.require(allow_unsandboxed)
    local_needed = remote is None or CodeCondition.VERIFIED_HELPERS in conditions
    return (local_layer(allow_unsandboxed) if local_needed else None), remote


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
    sandbox: str = LOCAL_SANDBOX,
    allow_unsandboxed: bool = False,
) -> Task:
    """The code-generation pilot: no help, a helper plan, verified helpers; k attempts each.

    Args:
        problems: ``bundled`` (our ten problems), or a JSONL path / Hub id of problems in our
            format or LiveCodeBench's.
        k: attempts per (problem, condition).
        conditions: ``all`` or a comma list of no-help, helper-plan, verified-helpers.
        limit: only the first ``limit`` problems.
        time_limit: wall-clock seconds of one attempt's test run (it is killed past it).
        memory_mb: memory of one attempt: all its processes together where this host offers
            a cgroup (``gapscope doctor`` says), and each process's address space.
        workers: attempts tested at once (default: the CPU count).
        max_tokens: generation budget per attempt.
        temperature: sampling temperature of the attempts.
        sandbox: ``bwrap`` (bubblewrap here, the default) or an Inspect sandbox type, as
            ``TYPE`` or ``TYPE:CONFIG`` (``docker``, ``docker:compose.yaml``, ``k8s``).
        allow_unsandboxed: run attempts on this host without a sandbox where bubblewrap does
            not work (or in Inspect's ``local`` sandbox); refused otherwise. Logged, and
            recorded in every score.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    chosen_conditions = parse_code_conditions(conditions)
    loaded = load_bundled_code() if problems == "bundled" else load_code_problems(problems)
    # a local problems file is covered in the sandbox wherever a mount would show it
    local = problems != "bundled" and Path(problems).exists()
    hidden = (str(Path(problems).resolve()),) if local else ()
    limits = Limits(
        time_s=time_limit, cpu_s=max(1, int(time_limit)), memory_mb=memory_mb, hidden=hidden
    )
    candidates = loaded.problems[:limit] if limit is not None else loaded.problems
    layer, remote = placement(sandbox, allow_unsandboxed, chosen_conditions)
    chosen, skipped = usable_problems(candidates, chosen_conditions, limits, layer)
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
        version=BEHAVIOUR.version,
        dataset=MemoryDataset(samples, name=f"ladder-code-{problems}"),
        solver=generate(tool_calls="none"),  # no tools offered: a tool call ends the turn
        scorer=code_tests(
            {p.pid: p for p in chosen}, limits, workers or os.cpu_count() or 1, layer, remote
        ),
        sandbox=remote.task_sandbox() if remote else None,
        epochs=Epochs(k),
        config=GenerateConfig(max_tokens=max_tokens, temperature=temperature, top_p=1.0),
        metadata=plain(
            CodeRunMetadata(
                problems=problems,
                n_problems=len(chosen),
                load_problems=notes,
                isolation=remote.isolation if remote else str(layer),
                sandboxed=remote.sandboxed if remote else layer is Isolation.BWRAP,
                limits=asdict(limits),
            )
        ),
    )


@scorer(metrics=[grouped(accuracy(), "condition")])
def code_tests(
    problems: dict[str, CodeProblem],
    limits: Limits,
    workers: int,
    layer: Isolation | None = None,
    remote: InspectSandbox | None = None,
) -> Scorer:
    """Pass when the attempt's program passes every test; NOANSWER when it gave no code block.

    The score's ``answer`` is how the run ended (passed, failed, timeout, memory, blocked...),
    its explanation the detail; a killed attempt is one failed attempt and the run goes on.
    Attempts run in ``remote`` (an Inspect sandbox) when given, else locally in ``layer``.
    """
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="gapscope-code")

    async def score(state: TaskState, target: Target) -> Score:
        problem = problems[str(state.metadata["pid"])]
        condition = CodeCondition(state.metadata["condition"])
        program = extract_program(state.output.completion)
        if program is None:
            return Score(value=NOANSWER, answer="no-code", explanation="no fenced code block")
        source = program_to_run(problem, condition, program)
        result: RunResult
        if remote is not None:
            result = await run_in_sandbox(source, problem.tests, problem.entry, limits, remote)
        else:
            cancel = threading.Event()
            attempt = functools.partial(
                run_tests, source, problem.tests, problem.entry, limits, layer, cancel
            )
            try:
                result = await asyncio.get_running_loop().run_in_executor(pool, attempt)
            except asyncio.CancelledError:  # Ctrl-C: kill the sandbox now, not at its limit
                cancel.set()
                raise
        return Score(
            value=CORRECT if result.solved else INCORRECT,
            answer=result.status.value,
            explanation=result.detail or f"{result.passed}/{result.total} tests passed",
            metadata=plain(
                CodeVerdictMetadata(
                    status=result.status.value,
                    passed=result.passed,
                    total=result.total,
                    isolation=result.isolation,
                    sandboxed=result.sandboxed,
                    seconds=result.seconds,
                    bounds=result.bounds,
                )
            ),
        )

    weakref.finalize(score, pool.shutdown, wait=False)
    return score


BEHAVIOUR = Behaviour(
    version=1,
    prompts=template.paths(
        "code_system",
        "code_stdin",
        "code_function",
        "code_no_help",
        "code_plan_item",
        "code_helper_plan",
        "code_verified_helpers",
    ),
    code=(code_pilot, code_tests),
)
"""What this task's version covers (:mod:`gapscope.task_version`): bump ``version`` when the
fingerprint test says its prompts, their rendering or the test scorer changed."""
