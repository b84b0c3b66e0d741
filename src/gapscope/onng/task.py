"""The O-NNG Inspect task: every problem at every noise level is a sample.

The solver asks the model, extracts ``{"draft", "code"}``, runs the static checks (statement
kept, closed-theory tactics: a failure is its own verdict and never reaches Lean), builds the
check file (renamed library, earlier theorems with their reference proofs, the candidate, a
statement guard) and has the Lean backend decide it in a worker thread. A backend failure is
``server_error`` for that sample; the backend is closed when the task lets go of the solver.
The scorer counts a sample correct only when Lean returned ``valid``; without a Lean backend
the task refuses to start.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from typing import cast

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig, get_model
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Scorer, Target, accuracy, grouped, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from gapscope.lean import LeanBackend, RayOptions, open_checker
from gapscope.log_metadata import plain
from gapscope.models import system_first
from gapscope.onng import prompting
from gapscope.onng.checking import lean_check, static_check
from gapscope.onng.contract import TASK, AttemptRecord, ProblemMetadata
from gapscope.onng.problemset import ProblemSet, load_problem_set
from gapscope.onng.prompting import build_prompt, system_prompt
from gapscope.onng.render import Obfuscation, obfuscation
from gapscope.params import real, whole
from gapscope.task_version import Behaviour


def parse_lams(spec: str) -> tuple[float, ...]:
    """``"0,0.25,1"`` -> (0.0, 0.25, 1.0); each in [0, 1], no repeats."""
    try:
        lams = tuple(float(s) for s in spec.split(",") if s.strip())
    except ValueError:
        raise ValueError(f"lams must be comma-separated numbers, got {spec!r}") from None
    if not lams or any(not 0.0 <= x <= 1.0 for x in lams) or len(set(lams)) != len(lams):
        raise ValueError(f"lams must be distinct values in [0, 1], got {spec!r}")
    return lams


def select_problems(problem_set: ProblemSet, modules: str, limit: int | None) -> list[int]:
    """Indices of the problems of ``modules`` (``all`` or a comma list), first ``limit``."""
    names = (
        problem_set.module_names
        if modules == "all"
        else tuple(m.strip() for m in modules.split(",") if m.strip())
    )
    unknown = [n for n in names if n not in problem_set.module_names]
    if unknown or not names:
        raise ValueError(
            f"unknown module(s) {unknown or modules!r}; choose from "
            f"{', '.join(problem_set.module_names)} or 'all'"
        )
    chosen = [p.index for p in problem_set.problems if p.module in names]
    return chosen[:limit] if limit is not None else chosen


PROVER_TEMPERATURE = 0.0
"""Greedy: O-NNG scores one answer per problem and noise level (the paper gives no sampling
settings), so the task sends temperature 0 itself instead of a server's default."""


@task(name=TASK)
def onng(
    lams: str = "0,0.25,0.5,0.75,1.0",
    seed: int = 0,
    modules: str = "all",
    limit: int | None = None,
    lean: str | None = None,
    check_timeout: float = 60.0,
    max_tokens: int = 8192,
    executor: str = "local",
    ray_address: str | None = None,
    ray_actors: int | None = None,
    allow_unsandboxed: bool = False,
) -> Task:
    """O-NNG: prove the Peano problem set under name obfuscation at each noise level.

    Args:
        lams: comma-separated noise levels lambda in [0, 1] (0 = original names).
        seed: seed of the renaming (one renaming per (lambda, seed) for the whole set).
        modules: ``all`` or a comma list of module names.
        limit: only the first ``limit`` selected problems.
        lean: Lean backend spec, e.g. ``local:DIR`` (see ``gapscope lean setup``).
        check_timeout: wall-clock limit of one Lean check, seconds.
        max_tokens: generation budget per answer.
        executor: where checks run: ``local`` or ``ray`` (see ``gapscope.lean.executor``).
        ray_address: with ``ray``: ``auto``, ``ray://HOST:PORT``, or None to start Ray here.
        ray_actors: with ``ray``: actors to start (None: one per CPU).
        allow_unsandboxed: check the model's Lean without the bubblewrap sandbox where it is
            missing; by default the task refuses to start there (before any model call).
    """
    seed = whole("seed", seed)
    limit = None if limit is None else whole("limit", limit, 1)
    check_timeout = real("check_timeout", check_timeout, 0, above=True)
    max_tokens = whole("max_tokens", max_tokens, 1)
    problem_set = load_problem_set()
    levels = parse_lams(lams)
    indices = select_problems(problem_set, modules, limit)
    backend = open_checker(
        lean,
        executor=executor,
        ray=RayOptions(ray_address, ray_actors),
        allow_unsandboxed=allow_unsandboxed,
    )
    obfs = {lam: obfuscation(problem_set, lam, seed) for lam in levels}
    samples = [_sample(problem_set, obfs[lam], i) for lam in levels for i in indices]
    return Task(
        version=BEHAVIOUR.version,
        dataset=MemoryDataset(samples, name="onng"),
        solver=[system_first(system_prompt()), prove(backend, obfs, check_timeout)],
        scorer=lean_verdict(),
        config=GenerateConfig(max_tokens=max_tokens, temperature=PROVER_TEMPERATURE, top_p=1.0),
        metadata={"seed": seed, "lams": list(levels), "toolchain": backend.toolchain},
    )


def _sample(problem_set: ProblemSet, obf: Obfuscation, index: int) -> Sample:
    problem = problem_set.problems[index]
    return Sample(
        id=f"{problem.name}@{obf.lam}",
        input=build_prompt(problem_set, obf, problem),
        metadata=plain(
            ProblemMetadata(
                problem=problem.name,
                module=problem.module,
                index=index,
                lam=obf.lam,
                seed=obf.seed,
            )
        ),
    )


@solver
def prove(backend: LeanBackend, obfs: dict[float, Obfuscation], timeout_s: float) -> Solver:
    """Ask once, extract the code, screen it, check it with Lean; record verdict and latency.

    Code with a forbidden command (``gapscope.lean.screen``) is not checked: its status is
    ``forbidden_command`` and its ``detail`` names the command.
    """
    problem_set = load_problem_set()

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        problem = problem_set.problems[int(state.metadata["index"])]
        obf = obfs[float(state.metadata["lam"])]
        started = time.perf_counter()
        output = await get_model().generate(state.messages)
        inference_s = time.perf_counter() - started
        state.output = output
        # the static checks are plain Python over model text: off the event loop, so one
        # long reply never stalls the other samples' model calls
        static = await asyncio.to_thread(static_check, problem_set, obf, problem, output.completion)
        answer = static.answer
        record: AttemptRecord = {
            "parse_status": answer.status.value,
            "draft": answer.draft,
            "code": answer.code,
            "inference_s": inference_s,
            "output_tokens": output.usage.output_tokens if output.usage else None,
            "status": static.status,
            "detail": static.detail,
            "messages": [],
        }
        if static.needs_lean:
            verdict = await asyncio.to_thread(
                lean_check, backend, problem_set, obf, problem, answer.code, timeout_s
            )
            record["status"] = verdict.status.value
            record["detail"] = verdict.detail
            record["messages"] = [m.data for m in verdict.messages if m.severity == "error"]
            record["check_s"] = verdict.elapsed_s
            record["checker"] = verdict.checker.value  # which check settled it
            record["checks"] = list(verdict.checks)  # every check that ran
            record["selftest"] = verdict.selftest  # whether that path passed its self-test
            record["sandboxed"] = verdict.sandboxed
            record["bounds"] = verdict.bounds  # the limits that held the checking process
        state.store.set("onng", record)
        return state

    weakref.finalize(solve, backend.close)
    return solve


@scorer(metrics=[accuracy(), grouped(accuracy(), "lam")])
def lean_verdict() -> Scorer:
    """Correct only when Lean's verdict is ``valid``."""

    async def score(state: TaskState, target: Target) -> Score:
        record = cast(AttemptRecord, state.store.get("onng", {}))
        status = record.get("status")
        return Score(
            value=CORRECT if status == "valid" else INCORRECT,
            explanation=f"parse {record.get('parse_status')}, lean {status}",
            metadata=plain(record),
        )

    return score


BEHAVIOUR = Behaviour(
    version=1,
    prompts=prompting.template.paths(),
    code=(prompting, prove, lean_verdict),
)
"""What this task's version covers (:mod:`gapscope.task_version`): bump ``version`` when the
fingerprint test says its prompts, the prover loop or the scorer changed."""
