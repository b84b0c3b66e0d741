"""The ``prove`` Inspect task: whole-proof generation, ``n`` samples per problem, Lean-checked.

One sample per problem and ``n`` epochs give the n attempts that pass@k is estimated from
(``gapscope prove report``); the epochs are reduced by Inspect's ``pass_at`` reducer, one per
k, so ``inspect view`` shows the same pass@k (:func:`attempt_reducers`). The scorer extracts
the proof, checks it with the Lean backend and records the verdict and the coherence class.
The backend is opened when the task is created, so a machine without Lean fails there with
the install message: no attempt is ever scored as if it had been checked.
"""

from __future__ import annotations

import asyncio
import math
import weakref
from typing import Any

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import (
    CORRECT,
    INCORRECT,
    Score,
    Scorer,
    ScoreReducer,
    Target,
    Value,
    accuracy,
    pass_at,
    scorer,
    stderr,
)
from inspect_ai.solver import TaskState

from gapscope.lean import LeanVerdict, RayOptions, open_checker
from gapscope.log_metadata import plain
from gapscope.models import check_options, steered_generate
from gapscope.params import generations, real, whole
from gapscope.prove import coherence, extract, templates
from gapscope.prove.checking import check_reply
from gapscope.prove.coherence import Coherence, classify
from gapscope.prove.contract import TASK, AttemptMetadata, ProblemMetadata, RunMetadata
from gapscope.prove.problems import Problem, load_problems, select
from gapscope.prove.templates import proof_prompt
from gapscope.task_version import Behaviour

MAX_MESSAGES = 20
"""Lean messages kept per attempt in the log (the first ones; the rest are counted)."""


def parse_ks(spec: str, n: int) -> tuple[int, ...]:
    """``"1,8,32"`` -> (1, 8, 32), each k in [1, n]."""
    try:
        ks = tuple(sorted({int(part) for part in spec.split(",") if part.strip()}))
    except ValueError:
        raise ValueError(
            f"k must be a comma list of integers such as 1,8,32, got {spec!r}"
        ) from None
    if not ks:
        raise ValueError("k lists no value; give e.g. 1,8,32")
    bad = [k for k in ks if not 1 <= k <= n]
    if bad:
        raise ValueError(
            f"pass@k needs 1 <= k <= n; k={bad} with n={n} samples per problem: raise n or drop k"
        )
    return ks


def attempt_reducers(ks: tuple[int, ...]) -> list[ScoreReducer]:
    """One Inspect ``pass_at(k)`` reducer per reported k, so the log's own results (what
    ``inspect view`` shows) are the pass@k the report reads: Inspect's reducer is the same
    unbiased estimator (Chen et al., 2021) over a problem's scored attempts, and its accuracy
    metric over problems is the mean pass@k. An attempt whose check failed is unscored (NaN)
    for both: Inspect leaves it out as gapscope's reader does. Where a problem has fewer
    scored attempts than k, Inspect's problem score is NaN and its mean skips it; gapscope's
    report gives no pass@k then and says which problem is short."""
    return [pass_at(k) for k in ks]


def problem_sample(problem: Problem) -> Sample:
    """A problem as an Inspect sample: the prompt, and the statement the scorer grafts onto."""
    return Sample(
        id=problem.name,
        input=proof_prompt(problem),
        metadata=plain(
            ProblemMetadata(
                name=problem.name,
                split=problem.split,
                header=problem.header,
                formal_statement=problem.formal_statement,
            )
        ),
    )


@task(name=TASK)
def prove(
    dataset: str,
    subset: str = "all",
    split: str = "test",
    n: int = 32,
    k: str = "1,8,32",
    lean: str | None = None,
    limit: int | None = None,
    max_tokens: int = 4096,
    temperature: float = 1.0,
    check_timeout: float = 60.0,
    executor: str = "local",
    ray_address: str | None = None,
    ray_actors: int | None = None,
    steer: str | None = None,
    alpha: float = 0.0,
    allow_unsandboxed: bool = False,
) -> Task:
    """Whole-proof generation on miniF2F-style problems, n attempts per problem.

    Args:
        dataset: a JSONL path or a Hugging Face dataset id (records: name, split, header,
            formal_statement).
        subset: ``all``, ``aime`` (seed: 15 AIME test problems), ``amc``, ``imo``,
            ``competition``, ``prefix:P`` or ``regex:R`` on the problem name.
        split: the split to run (``test`` for miniF2F-test).
        n: attempts per problem (the seed reports pass@32).
        k: the k values the report shows, comma-separated, each <= n.
        lean: the Lean backend spec (see ``gapscope lean``); None uses the configured one.
        limit: run only the first ``limit`` selected problems.
        max_tokens: generation budget per attempt.
        temperature: sampling temperature (pass@k needs diverse samples).
        check_timeout: wall-clock limit of one Lean check, seconds.
        executor: where checks run: ``local`` or ``ray`` (see ``gapscope.lean.executor``).
        ray_address: with ``ray``: ``auto``, ``ray://HOST:PORT``, or None to start Ray here.
        ray_actors: with ``ray``: actors to start (None: one per CPU).
        steer: a direction directory to steer generation with (seed: the transfer test).
        alpha: steering strength (0 = no steering); the seed's transfer uses -3 and +1.
        allow_unsandboxed: check the model's Lean without the bubblewrap sandbox where it is
            missing; by default the task refuses to start there (before any model call).
    """
    n = whole("n", n, 1)
    limit = None if limit is None else whole("limit", limit, 1)
    max_tokens = whole("max_tokens", max_tokens, 1)
    temperature = real("temperature", temperature, 0)
    check_timeout = real("check_timeout", check_timeout, 0, above=True)
    alpha = real("alpha", alpha)
    ks = parse_ks(k, n)
    steering = check_options(steer, alpha)
    loaded = load_problems(dataset, split=split)
    chosen = select(loaded.problems, split=split, subset=subset, limit=limit)
    if not chosen:
        skipped = "; ".join(map(str, loaded.skipped[:5]))
        raise ValueError(
            f"no problem in {dataset!r} for split {split!r} and subset {subset!r}"
            + (f" (skipped records: {skipped})" if skipped else "")
        )
    generations(len(chosen) * n, f"{len(chosen)} problems x n={n}")
    return Task(
        version=BEHAVIOUR.version,
        dataset=MemoryDataset([problem_sample(p) for p in chosen], name=f"prove-{subset}"),
        solver=steered_generate(steer, alpha),
        scorer=lean_proof(
            lean,
            check_timeout,
            executor,
            RayOptions(ray_address, ray_actors),
            allow_unsandboxed,
        ),
        epochs=Epochs(n, attempt_reducers(ks)),
        # pass@k needs samples of the model's own distribution: the seed gives no top-p, so
        # send 1.0 (no truncation) rather than let a server's default nucleus apply.
        config=GenerateConfig(max_tokens=max_tokens, temperature=temperature, top_p=1.0),
        metadata=plain(
            RunMetadata(
                dataset=dataset,
                subset=subset,
                split=split,
                n=n,
                k=list(ks),
                problems=[p.name for p in chosen],
                load_problems=[str(p) for p in loaded.skipped],
                steer=steer,
                alpha=alpha,
                steering=steering,
            )
        ),
    )


def _verdict_metadata(verdict: LeanVerdict) -> dict[str, Any]:
    messages = [
        {"severity": m.severity, "data": m.data, "line": m.line, "column": m.column}
        for m in verdict.messages[:MAX_MESSAGES]
    ]
    return {
        "status": verdict.status.value,
        "messages": messages,
        "messages_dropped": max(0, len(verdict.messages) - MAX_MESSAGES),
        "elapsed_s": verdict.elapsed_s,
        "axioms": list(verdict.axioms) if verdict.axioms is not None else None,
        "detail": verdict.detail,
        "checker": verdict.checker.value,  # which check settled it (docs/lean.md)
        "checks": list(verdict.checks),  # every check that ran: repl-text, kernel:comparator
        "selftest": verdict.selftest,  # whether that path passed `gapscope lean selftest`
        "sandboxed": verdict.sandboxed,
        "bounds": verdict.bounds,  # the limits that held the checking process (docs/lean.md)
    }


@scorer(metrics=[accuracy(), stderr()])
def lean_proof(
    lean: str | None = None,
    timeout_s: float = 60.0,
    executor: str = "local",
    ray: RayOptions | None = None,
    allow_unsandboxed: bool = False,
) -> Scorer:
    """Extract the proof, screen it, check it with Lean, record verdict and coherence class.

    The mean score is pass@1. A backend failure on one attempt is recorded as
    ``server_error`` and left unscored (NaN, Inspect's sentinel for a score that says
    nothing: its reducers and metrics skip it, as the report does) and the run goes on; a
    reply with a forbidden command is ``forbidden_command`` (incorrect: the model wrote it)
    and never reaches Lean.
    """
    backend = open_checker(lean, executor=executor, ray=ray, allow_unsandboxed=allow_unsandboxed)

    async def score(state: TaskState, target: Target) -> Score:
        meta = state.metadata
        problem = Problem(meta["name"], meta["split"], meta["header"], meta["formal_statement"])
        attempt = await asyncio.to_thread(
            check_reply, backend, state.output.completion, problem, timeout_s
        )
        extraction, verdict = attempt.extraction, attempt.verdict
        coherence = classify(extraction.status, verdict)
        return Score(
            value=_attempt_value(coherence),
            answer=extraction.code,
            explanation=f"{coherence.value} ({extraction.status.value})",
            metadata=plain(
                AttemptMetadata(
                    coherence=coherence.value,
                    extraction=extraction.status.value,
                    verdict=_verdict_metadata(verdict) if verdict is not None else None,
                )
            ),
        )

    weakref.finalize(score, backend.close)
    return score


def _attempt_value(coherence: Coherence) -> Value:
    """Proven is correct, a failed check unscored (it says nothing about the proof), and
    anything else the model wrote incorrect."""
    if coherence is Coherence.SERVER_ERROR:
        return math.nan
    return CORRECT if coherence is Coherence.PROVEN else INCORRECT


BEHAVIOUR = Behaviour(
    version=1,
    prompts=templates.template.paths(),
    code=(templates, extract, coherence, attempt_reducers, lean_proof, _attempt_value),
)
"""What this task's version covers (:mod:`gapscope.task_version`): bump ``version`` when the
fingerprint test says its prompt, the proof extraction, the coherence classes or the scorer
changed."""
