"""The OracleLadder Inspect task: every probe is a sample, every rollout an epoch.

One sample per (family, condition) and per (family, tested milestone) for Stage 0; ``k``
epochs give the k rollouts. The scorer is the deterministic verifier cascade; the analysis
(``gapscope ladder report``) counts correct epochs per sample and applies the taxonomy.
"""

from __future__ import annotations

import asyncio
import inspect
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig
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

from gapscope.ladder import probes
from gapscope.ladder.contract import TASK, ProbeMetadata, RunMetadata, VerdictMetadata
from gapscope.ladder.families import (
    FamiliesVersion,
    Family,
    at_version,
    load_bundled,
    load_families,
)
from gapscope.ladder.probes import (
    ALL_CONDITIONS,
    PAPER_MAX_TOKENS,
    Condition,
    Probe,
    build_probes,
    template,
)
from gapscope.ladder.released_sets import RELEASED_SETS, released_families
from gapscope.ladder.strict_cascade import NO_BOX, StrictCascade, after_think, last_box
from gapscope.log_metadata import plain
from gapscope.models import system_first
from gapscope.params import choices, generations, real, whole
from gapscope.task_version import Behaviour
from gapscope.verify import Verdict, Verifier, extract_boxed, verify

_SHARED_TIMEOUT_S = inspect.signature(Verifier).parameters["timeout_s"].default
"""The check timeout of the process-wide verifier behind ``gapscope.verify.verify``."""


def parse_conditions(spec: str) -> tuple[Condition, ...]:
    """``all``, ``ladder`` (C1-C3 + S0) or a comma list such as ``C1,C3,S0``."""
    ladder = (Condition.C1, Condition.C2, Condition.C3, Condition.S0)
    return choices("condition(s)", spec, Condition, {"all": ALL_CONDITIONS, "ladder": ladder})


def load_family_set(
    families: str,
    limit: int | None = None,
    version: FamiliesVersion = FamiliesVersion.CORRECTED,
    release: Path | None = None,
) -> tuple[list[Family], list[str]]:
    """The families to probe (read at ``version``) and the load problems (as text) of any
    skipped records: ``bundled``, a released set by name (from the ``release`` checkout), a
    JSONL path or a Hub id."""
    if families == "bundled":
        result = load_bundled()
    elif families in RELEASED_SETS:
        result = released_families(families, release)
    else:
        result = load_families(families)
    problems = [str(p) for p in result.problems]
    chosen = at_version(result.families[:limit] if limit is not None else result.families, version)
    if not chosen:
        raise ValueError(f"no valid family in {families!r}: {'; '.join(problems) or 'empty'}")
    return chosen, problems


def probe_sample(probe: Probe) -> Sample:
    """A probe as an Inspect sample: the probe's user turn (the task adds the system prompt)."""
    return Sample(
        id=probe.sample_id,
        input=probe.prompt,
        target=probe.gold,
        metadata=plain(
            ProbeMetadata(
                pid=probe.pid,
                condition=probe.condition.value,
                milestone_index=probe.milestone_index,
                schema=probe.schema.value if probe.schema else None,
                donors=list(probe.donors),
            )
        ),
    )


VERIFIERS = ("gapscope", "authors")
"""The graders a run may use: ours, or the authors' strict cascade."""

EXPECTED_REPLY_SHARE = 0.5
"""The share of its token cap a plan expects a rollout to use: SmolLM2-135M-Instruct's 16
rollouts of a quick profile (cap 384, ``transformers serve``) averaged 180 tokens, 4 of them at
the cap. A model that reasons at length runs to the cap: the plan's "up to" covers it."""


@task(name=TASK)
def oracle_ladder(
    families: str = "bundled",
    k: int = 8,
    conditions: str = "all",
    seed: int = 0,
    limit: int | None = None,
    max_tokens: int = PAPER_MAX_TOKENS,
    temperature: float = 0.7,
    verify_timeout: float = 5.0,
    families_version: str = FamiliesVersion.CORRECTED.value,
    release: str | None = None,
    verifier: str = "gapscope",
) -> Task:
    """OracleLadder: Stage 0, C1/C2/C3 and the controls, k rollouts each.

    Args:
        families: a JSONL path, a Hugging Face dataset id, ``bundled`` (shipped set), or a
            released set by name (``main-354``, ``held-out-32``; needs ``release``).
        k: rollouts per probe (the paper uses 8).
        conditions: ``all``, ``ladder`` or a comma list (C1,C2,C3,C2-random,C2-generic,
            C3-mismatched,S0).
        seed: seed of the controls' donor choices.
        limit: probe only the first ``limit`` families.
        max_tokens: generation budget per rollout (default: the paper's 16384).
        temperature: sampling temperature of the rollouts.
        verify_timeout: wall-clock limit of one verifier check, seconds.
        families_version: ``corrected`` (default: the release's post-publication corrections
            applied) or ``published`` (graded as in the paper; see ``FamiliesVersion``).
        release: a checkout of the authors' release, for a released set by name.
        verifier: ``gapscope`` (default: ``gapscope.verify``) or ``authors`` (their strict
            cascade, ``strict_cascade``: to reproduce their grading).
    """
    k = whole("k", k, 1)
    seed = whole("seed", seed)
    limit = None if limit is None else whole("limit", limit, 1)
    max_tokens = whole("max_tokens", max_tokens, 1)
    temperature = real("temperature", temperature, 0)
    verify_timeout = real("verify_timeout", verify_timeout, 0, above=True)
    try:
        version = FamiliesVersion(families_version)
    except ValueError:
        known = ", ".join(v.value for v in FamiliesVersion)
        raise ValueError(
            f"families_version must be one of {known}, got {families_version!r}"
        ) from None
    if verifier not in VERIFIERS:
        raise ValueError(f"verifier must be one of {', '.join(VERIFIERS)}, got {verifier!r}")
    chosen, problems = load_family_set(
        families, limit, version, Path(release) if release is not None else None
    )
    probes = build_probes(chosen, parse_conditions(conditions), seed)
    generations(len(probes) * k, f"{len(probes)} probes x k={k}")
    return Task(
        version=BEHAVIOUR.version,
        dataset=MemoryDataset([probe_sample(p) for p in probes], name=f"ladder-{families}"),
        solver=[system_first(template("system")), generate(tool_calls="none")],
        scorer=(
            ladder_strict_cascade(verify_timeout)
            if verifier == "authors"
            else ladder_verifier(verify_timeout)
        ),
        epochs=Epochs(k),
        # The paper gives k = 8 sampled rollouts but no top-p: send 1.0 (no truncation)
        # rather than let a server's default nucleus change the rollouts.
        config=GenerateConfig(max_tokens=max_tokens, temperature=temperature, top_p=1.0),
        metadata=plain(
            RunMetadata(
                families=families,
                families_version=version.value,
                verifier=verifier,
                n_families=len(chosen),
                load_problems=problems,
                tested_milestones={f.pid: len(f.tested_milestones) for f in chosen},
                expected_reply_tokens=max(1, round(max_tokens * EXPECTED_REPLY_SHARE)),
            )
        ),
    )


@scorer(metrics=[grouped(accuracy(), "condition")])
def ladder_verifier(timeout_s: float = 5.0) -> Scorer:
    """Grade a rollout with the verifier cascade (no LLM judge).

    The score's ``answer`` is the extracted final answer, so the viewer shows what was graded;
    a rollout without a ``\\boxed{}`` answer scores NOANSWER (a format failure, countable
    apart from a wrong answer, and never correct).

    At the default timeout it grades with the process-wide verifier (``verify``): building
    the probes already started that one's worker pool (the leak check compares answers), and
    a second pool costs a start-up of seconds per task (3.1-3.2 s measured on the shared
    2-core machine, against a bare-Inspect run of about 30 s in ``bench_harness``).
    Another timeout gets a verifier of its own, closed when the task lets go of the scorer.
    """
    check: Callable[[str, str, Any], Verdict] = verify
    own = None if timeout_s == _SHARED_TIMEOUT_S else Verifier(timeout_s=timeout_s)
    if own is not None:
        check = own.check

    async def score(state: TaskState, target: Target) -> Score:
        completion = state.output.completion
        answer = extract_boxed(completion)
        if answer is None:
            return Score(
                value=NOANSWER,
                explanation="no \\boxed{} answer found",
                metadata=plain(VerdictMetadata(reason="no_boxed", stage="extract")),
            )
        schema: Any = state.metadata.get("schema")
        verdict = await asyncio.to_thread(check, completion, target.text, schema)
        return Score(
            value=CORRECT if verdict.accepted else INCORRECT,
            answer=answer,
            explanation=verdict.reason,
            metadata=plain(VerdictMetadata(reason=verdict.reason, stage=verdict.stage)),
        )

    if own is not None:
        weakref.finalize(score, own.close)
    return score


@scorer(metrics=[grouped(accuracy(), "condition")])
def ladder_strict_cascade(timeout_s: float = 5.0) -> Scorer:
    """Grade a rollout as the OracleLadder authors' strict cascade does (``strict_cascade``).

    NOANSWER where their cascade finds no box; the score's ``answer`` is the box it graded.
    """
    cascade = StrictCascade(timeout_s)

    async def score(state: TaskState, target: Target) -> Score:
        completion = state.output.completion
        verdict = await asyncio.to_thread(cascade.check, completion, target.text)
        metadata = plain(VerdictMetadata(reason=verdict.reason, stage="authors-cascade"))
        if verdict.reason == NO_BOX:
            return Score(value=NOANSWER, explanation=verdict.reason, metadata=metadata)
        return Score(
            value=CORRECT if verdict.accepted else INCORRECT,
            answer=last_box(after_think(completion)),
            explanation=verdict.reason,
            metadata=metadata,
        )

    weakref.finalize(score, cascade.close)
    return score


BEHAVIOUR = Behaviour(
    version=1,
    prompts=template.paths(
        "system",
        "c1_direct",
        "c2_roadmap",
        "c2_generic",
        "c3_answers",
        "roadmap_item",
        "roadmap_item_answer",
    ),
    code=(probes, ladder_verifier, ladder_strict_cascade),
)
"""What this task's version covers (:mod:`gapscope.task_version`): bump ``version`` when the
fingerprint test says its probe prompts or its scorers changed."""
