"""The ``gapscope/t2`` Inspect task: one sample per (valid record, context setting).

Records are audited first; only records with no defect become samples, and the task's
metadata lists every skipped id with its reason (``gapscope.analysis.t2`` reports them). The
scorer extracts the last lean block, screens it, checks both programs (or builds the
project, in the repository track) and records every verdict. The Lean checker is opened when
the task is created, so without one the run stops before the model is asked anything.

Generation defaults are the paper's: zero-shot, temperature 0.6, top_p 0.95, one sample per
problem (``k`` for more), max_tokens 8192 (the released configs). ``shots`` adds worked
exemplars before the question (the paper's 2-shot comparison, :mod:`gapscope.t2.shots`) and
``refine`` hands Lean's compile errors back for that many rounds (the paper's Hilbert-style
baseline, :mod:`gapscope.t2.refine`).
"""

from __future__ import annotations

import asyncio
import json
import weakref
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageUser,
    GenerateConfig,
    ModelOutput,
)
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Scorer, Target, accuracy, scorer
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver

from gapscope.lean import (
    Bounds,
    RayOptions,
    VerdictCache,
    open_checker,
    repl_bounds,
    untested_allowed,
)
from gapscope.log_metadata import plain
from gapscope.models import system_first
from gapscope.params import generations, real, whole
from gapscope.t2 import extract, prompting, refine, shots
from gapscope.t2.audit import Audit, Defect, SuccessorsOf, audit_records
from gapscope.t2.beq import Equivalence, equivalence
from gapscope.t2.bleu import BleuMetric, exact_match, sentence_bleu
from gapscope.t2.contract import TASK, RunMetadata, SampleScoreExtras, ScoredSample
from gapscope.t2.declarations import is_hard
from gapscope.t2.evaluate import Evaluate, SampleOutcome, SampleResult, evaluate_answer, settle
from gapscope.t2.extract import Answer, extract_answer, released_answer
from gapscope.t2.prompting import (
    Context,
    load_nl_files,
    parse_contexts,
    system_prompt,
    user_prompt,
)
from gapscope.t2.records import FIELDS, T2Record, load_records
from gapscope.t2.refine import Attempting, compile_attempt
from gapscope.t2.repo import (
    RepoConfig,
    RepoSuccessors,
    Workspaces,
    evaluate_in_repo,
    file_text_of,
)
from gapscope.t2.rules import Rules, parse_rules, released_rows
from gapscope.t2.shots import choose_exemplars
from gapscope.t2.successors import TargetIdentity, record_successors, target_identity
from gapscope.t2.untested import require_tested, untested_path
from gapscope.task_version import Behaviour

GROUND_TRUTH = "ground-truth"
"""The context label of ground-truth samples (the record's own target, no model)."""

REFINE_TRAIL = "t2_refine"
"""The sample store key of the refinement's trail: each checked attempt's status, in order."""
REFINE_REVISIONS = "t2_revisions"
"""The sample store key of the number of times the errors were handed back."""


def read_id_list(path: Path) -> set[str]:
    """Ids to exclude: a ground-truth run's ``--json`` output (its ``invalid`` list) or one
    id per line."""
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return {line.strip() for line in text.splitlines() if line.strip()}
    if isinstance(data, dict) and isinstance(data.get("details"), dict):
        data = data["details"]  # the --json envelope of `gapscope run t2 --ground-truth`
    if isinstance(data, dict) and isinstance(data.get("ground_truth_invalid"), list):
        return {str(x) for x in data["ground_truth_invalid"]}
    raise ValueError(f"{path}: expected one id per line or a ground-truth run's --json output")


def _metadata(record: T2Record, context: str, rows: int, dependents: int) -> dict[str, Any]:
    """A sample's metadata. ``successors`` are the test units (the contract's word); the check
    counts them (the repository track adds the dependent modules), and until it has run the
    record's ``dependents`` stand for them, as they are in the file track."""
    data: dict[str, Any] = {field: getattr(record, field) for field in FIELDS}
    data.update(
        line=record.line,
        context=context,
        successors=dependents,
        dependents=dependents,
        hard=is_hard(record.target_code),
        rows=rows,
    )
    return data


def _record(meta: dict[str, Any]) -> T2Record:
    return T2Record(**{field: meta[field] for field in FIELDS}, line=int(meta["line"]))


@task(name=TASK)
def t2(
    data: str,
    context: str = "all",
    nl: str | list[str] | None = None,
    lean: str | None = None,
    ground_truth: bool = False,
    exclude: str | None = None,
    limit: int | None = None,
    k: int = 1,
    temperature: float = 0.6,
    top_p: float = 0.95,
    max_tokens: int = 8192,
    check_timeout: float = 600.0,
    executor: str = "local",
    ray_address: str | None = None,
    ray_actors: int | None = None,
    repo: str | None = None,
    build_timeout: float = 1200.0,
    workers: int = 2,
    lake_memory_mb: int | None = None,
    lake_processes: int | None = None,
    lake_output_mb: int | None = None,
    split: str = "train",
    allow_unsandboxed: bool = False,
    min_successors: int = 2,
    rules: str = "gapscope",
    shots: int = 0,
    shot_pool: str | None = None,
    refine: int = 0,
    beq: bool = False,
    allow_untested: bool = False,
) -> Task:
    """T2 testing accuracy: generate the target declaration, test it with its successors.

    Args:
        data: T2 records (JSONL path or Hugging Face dataset id), the released format.
        context: ``all`` or a comma list of ``nl+st``, ``nl``, ``st``, ``none`` (NL shown x
            successor code shown; header and code before are always shown).
        nl: informalization file(s): T2's informalize output (``results_merged.json``) or id ->
            NL; default: the records' ``natural_language`` (the run notes every fallback).
        lean: Lean backend spec (``local:DIR`` or ``kimina:URL``); None uses the configured.
        ground_truth: evaluate each record's own ``target_code`` instead of asking a model.
        exclude: file of ids to leave out (e.g. a ground-truth run's invalid records).
        limit: only the first ``limit`` valid records.
        k: samples per problem (paper: 1).
        temperature: sampling temperature (paper: 0.6).
        top_p: nucleus sampling (paper: 0.95).
        max_tokens: generation budget (released configs: 8192).
        check_timeout: seconds per Lean check (paper: 600 s compile timeout).
        executor: ``local`` (a REPL pool on this machine) or ``ray`` (Ray actors).
        ray_address: ``auto``, ``ray://HOST:PORT``, or None to start Ray locally.
        ray_actors: Ray actors to start (None: one per CPU of the cluster).
        repo: a Lean project (or a folder of projects named by ``dataset_name``): test in the
            project with ``lake build`` instead of the record's own file.
        build_timeout: seconds per ``lake build`` in the repository track (T2: 1200 s).
        workers: private project copies, i.e. parallel builds, in the repository track.
        lake_memory_mb: memory of one ``lake`` call with everything it starts, in MB
            (repository track; default: a REPL's, 8192).
        lake_processes: processes and threads of one ``lake`` call with everything it
            starts (repository track; default: a REPL's, 512).
        lake_output_mb: what one ``lake`` call may print, kept in a file on this host, in
            MB; reaching it stops the call as the other limits do (repository track;
            default 1024).
        split: the Hub split, for a Hub dataset id.
        allow_unsandboxed: run the generated Lean (REPLs, ``lake``) without the bubblewrap
            sandbox where it is missing; by default the task refuses to start there.
        min_successors: skip records with fewer dependents (declarations that use the target,
            directly or through one another: the paper's successors, 2): after it in its file,
            and in the repository track also in every module importing its module.
        rules: ``gapscope`` (default: audited records, renamed answers and backend failures
            reported apart) or ``t2``, the released evaluator's counting (every row, the last
            duplicate wins, its answer extraction, failures in the denominator, pass@k), for a
            number next to the paper's (:mod:`gapscope.t2.rules`).
        shots: worked exemplars shown before each question (paper: 0; its few-shot
            comparison: 2), chosen from ``shot_pool`` by :mod:`gapscope.t2.shots`.
        shot_pool: T2 records the exemplars come from (default: ``data``); the release took
            them from the existing track's records of the target's prop type.
        refine: rounds of compile feedback after the first answer (paper: 0; its
            Hilbert-style baseline revises with the compiler's errors): the answer's compile
            errors are handed back until it compiles (:mod:`gapscope.t2.refine`). File track
            only.
        beq: also compare each theorem answer with the original by BEqL and BEq+ (proving
            both directions, as the release's ``evaluate_beq.py``; :mod:`gapscope.t2.beq`).
            File track only.
        allow_untested: run on a checking path no known-answer self-test certifies (a kimina
            server, the repository track, or a local workspace whose self-test has not
            passed); without it such a run stops before any model call. Its scores are
            labelled ``selftest: false`` (:mod:`gapscope.t2.untested`).
    """
    k = whole("k", k, 1)
    refine = _refine_rounds(refine, repo, ground_truth)
    if beq and repo:
        raise ValueError(
            "beq proves equivalence with the Lean backend of the file track; the repository"
            " track (repo) has none: drop repo or beq"
        )
    limit = None if limit is None else whole("limit", limit, 1)
    config = _generate_config(temperature, top_p, max_tokens)
    checking = _checking(
        lean,
        check_timeout,
        executor,
        RayOptions(address=ray_address, actors=ray_actors),
        repo,
        build_timeout,
        workers,
        _lake_bounds(lake_memory_mb, lake_processes, lake_output_mb),
        allow_unsandboxed,
        allow_untested,
    )
    contexts, counting = parse_contexts(context), _counting(rules, repo)
    selection = _select(data, split, checking.repo, counting, min_successors, exclude, limit)
    exemplars = _exemplar_pool(whole("shots", shots, 0), shot_pool, selection, split)
    plan = _plan(selection, contexts, nl, ground_truth, exemplars)
    return _task(plan, checking, config, k, refine, beq)


def _refine_rounds(refine: int, repo: str | None, ground_truth: bool) -> int:
    """The rounds of compile feedback, refused where there is nothing to refine with."""
    rounds = whole("refine", refine, 0)
    if rounds and repo:
        raise ValueError(
            "refine hands back the Lean backend's compile errors, a check of the file track;"
            " the repository track (repo) has none between answers: drop repo or refine"
        )
    if rounds and ground_truth:
        raise ValueError("refine revises a model's answers; ground_truth asks no model")
    return rounds


def _generate_config(temperature: float, top_p: float, max_tokens: int) -> GenerateConfig:
    """The sampling settings, each checked against its range."""
    return GenerateConfig(
        temperature=real("temperature", temperature, 0),
        top_p=real("top_p", top_p, 0, 1, above=True),
        max_tokens=whole("max_tokens", max_tokens, 1),
    )


@dataclass(frozen=True)
class _Checking:
    """How answers are checked: a Lean backend (``lean``, run by ``executor``), or with
    ``repo`` ``lake build`` in copies of a project; ``repo_spec`` is the argument as given."""

    lean: str | None
    timeout_s: float
    executor: str
    ray: RayOptions
    repo: RepoConfig | None
    repo_spec: str | None
    allow_unsandboxed: bool = False
    allow_untested: bool = False
    untested: str | None = None
    """The path without a self-test the user allowed (:func:`untested_path`), or None."""


def _checking(
    lean: str | None,
    check_timeout: float,
    executor: str,
    ray: RayOptions,
    repo: str | None,
    build_timeout: float,
    workers: int,
    lake_bounds: Bounds,
    allow_unsandboxed: bool,
    allow_untested: bool,
) -> _Checking:
    """The checking settings, the timeouts and the project copies checked against their
    ranges (also without ``repo``: a bad value is an error whatever the track); a path no
    self-test certifies is refused here, before any model call, unless ``allow_untested``."""
    timeout_s = real("check_timeout", check_timeout, 0, above=True)
    build_timeout = real("build_timeout", build_timeout, 0, above=True)
    workers = whole("workers", workers, 1)
    repo_config = (
        RepoConfig(
            Path(repo),
            build_timeout_s=build_timeout,
            workers=workers,
            allow_unsandboxed=allow_unsandboxed,
            bounds=lake_bounds,
        )
        if repo
        else None
    )
    untested = untested_path(lean, repo)
    require_tested(untested, allow_untested)
    return _Checking(
        lean,
        timeout_s,
        executor,
        ray,
        repo_config,
        repo,
        allow_unsandboxed,
        untested_allowed(allow_untested),
        untested,
    )


def _lake_bounds(memory_mb: int | None, processes: int | None, output_mb: int | None) -> Bounds:
    """What one ``lake`` call of the repository track may use with all it starts: a REPL's
    bounds (:func:`gapscope.lean.repl_bounds`) unless raised or lowered, each value checked
    (also without ``repo``, as the other settings of the track)."""
    default = repl_bounds(None)
    return Bounds(
        default.memory_mb if memory_mb is None else whole("lake_memory_mb", memory_mb, 64),
        default.processes if processes is None else whole("lake_processes", processes, 1),
        default.cpus,
        default.output_mb if output_mb is None else whole("lake_output_mb", output_mb, 1),
    )


def _counting(rules: str, repo: str | None) -> Rules:
    """The counting rules; the released ones exist for the file track only."""
    counting = parse_rules(rules)
    if counting is Rules.T2 and repo:
        raise ValueError(
            "rules t2 is the released existing-track evaluator's counting; its research-track"
            " evaluator (a bare lake build, compile only after a failed build) is not"
            " reproduced: use rules gapscope with repo"
        )
    return counting


@dataclass(frozen=True)
class _Selection:
    """The records a run evaluates (``chosen``: each with its rows in the data file) and why
    the others were skipped. ``dependents``: per chosen record, the declarations that use its
    target, directly or through one another (the audit's count, which ``min_successors``
    filters on)."""

    data: str
    audit: Audit
    min_successors: int
    counting: Rules
    chosen: list[tuple[T2Record, int]]
    dependents: dict[str, int]
    skipped: dict[str, list[str]]
    loaded: list[T2Record]


def _select(
    data: str,
    split: str,
    repo: RepoConfig | None,
    counting: Rules,
    min_successors: int,
    exclude: str | None,
    limit: int | None,
) -> _Selection:
    """Load and audit the records, then keep what the rules count (gapscope's: the audited
    records; the released: every row, a duplicated id's last), less ``exclude``, up to
    ``limit``."""
    loaded = load_records(data, split=split)
    # The audit's "successors" are the target's dependents (docs/t2.md, Successors).
    dependents_of: SuccessorsOf = RepoSuccessors(repo.root) if repo else record_successors
    report = audit_records(
        loaded.records,
        loaded.problems,
        partial(file_text_of, repo.root) if repo else None,
        min_successors=min_successors,
        successors_of=dependents_of,
    )
    if counting is Rules.T2:  # every row; a duplicated id's last row, counted per row
        invalid = Defect.INVALID_RECORD.value
        unreadable = report.ids().get(invalid)
        skipped: dict[str, list[str]] = {invalid: unreadable} if unreadable else {}
        candidates = [(row.record, row.rows) for row in released_rows(loaded.records)]
    else:
        skipped = report.ids()
        candidates = [(record, 1) for record in report.valid]
    excluded = read_id_list(Path(exclude)) if exclude else set()
    chosen = [(r, rows) for r, rows in candidates if r.id not in excluded]
    if excluded:
        skipped["ground_truth_fails"] = [r.id for r, _ in candidates if r.id in excluded]
    chosen = chosen[:limit] if limit is not None else chosen
    dependents = {r.id: len(dependents_of(r)) for r, _ in chosen}
    return _Selection(
        data, report, min_successors, counting, chosen, dependents, skipped, loaded.records
    )


@dataclass(frozen=True)
class _ExemplarPool:
    """Where a run's exemplars come from: ``shots`` per question out of ``records``, the
    records of the file ``name``."""

    shots: int
    name: str | None
    records: list[T2Record]


def _exemplar_pool(
    shots: int, shot_pool: str | None, selection: _Selection, split: str
) -> _ExemplarPool:
    """The records exemplars are chosen from: ``shot_pool``'s, else the run's own data."""
    if shots == 0:
        return _ExemplarPool(0, None, [])
    if shot_pool is None:
        return _ExemplarPool(shots, selection.data, selection.loaded)
    return _ExemplarPool(shots, shot_pool, load_records(shot_pool, split=split).records)


@dataclass(frozen=True)
class _Plan:
    """The samples of a run: per chosen record one per context setting (one ground-truth
    sample with ``ground_truth``), the NL files used and the records whose NL fell back to
    their ``natural_language`` field; ``skipped`` adds the samples left without NL."""

    selection: _Selection
    contexts: tuple[Context, ...]
    ground_truth: bool
    nl_paths: list[str]
    samples: list[Sample]
    nl_fallback: list[str]
    skipped: dict[str, list[str]]
    exemplars: _ExemplarPool


def _plan(
    selection: _Selection,
    contexts: tuple[Context, ...],
    nl: str | list[str] | None,
    ground_truth: bool,
    exemplars: _ExemplarPool,
) -> _Plan:
    """The samples of every chosen record; raises ValueError when there is none to run."""
    nl_paths = [nl] if isinstance(nl, str) else list(nl or [])
    nl_texts = load_nl_files([Path(p) for p in nl_paths])
    samples: list[Sample] = []
    missing_nl: list[str] = []
    nl_fallback: list[str] = []
    for record, rows in selection.chosen:
        target = target_identity(record)
        dependents = selection.dependents[record.id]
        if ground_truth:
            meta = _metadata(record, GROUND_TRUTH, rows, dependents)
            samples.append(Sample(id=f"{record.id}@{GROUND_TRUTH}", input="-", metadata=meta))
            continue
        text = nl_texts.get(record.id)
        if text is None and any(setting.nl for setting in contexts):
            nl_fallback.append(record.id)
        text = record.natural_language if text is None else text
        for setting in contexts:
            if setting.nl and not text.strip():  # the released rules count it as missing
                missing_nl.append(f"{record.id}@{setting.name}")
                continue
            shown = choose_exemplars(
                exemplars.records,
                record,
                exemplars.shots,
                setting,
                lambda r: nl_texts.get(r.id, r.natural_language),
                exemplars.name or "",
            )
            question = user_prompt(record, target, setting, text)
            turns: list[ChatMessage] = []
            for exemplar in shown:
                asked, answered = exemplar.turns(setting)
                turns += [ChatMessageUser(content=asked), ChatMessageAssistant(content=answered)]
            meta = _metadata(record, setting.name, rows, dependents)
            meta["exemplars"] = [e.record.id for e in shown]
            samples.append(
                Sample(
                    id=f"{record.id}@{setting.name}",
                    input=[*turns, ChatMessageUser(content=question)] if turns else question,
                    metadata=meta,
                )
            )
    skipped = selection.skipped | ({"missing_nl": missing_nl} if missing_nl else {})
    if not samples:
        raise _no_sample(selection, missing_nl)
    return _Plan(
        selection, contexts, ground_truth, nl_paths, samples, nl_fallback, skipped, exemplars
    )


def _no_sample(selection: _Selection, missing_nl: list[str]) -> ValueError:
    """Why a run has nothing to ask: the records' defects and filter, the samples without NL."""
    report, data = selection.audit, selection.data
    return ValueError(
        f"no sample to run from {data!r}: {report.skipped()} of {report.total} records have"
        f" defects or fewer than {selection.min_successors} successors"
        f" (see `gapscope t2 audit {data}`)"
        + (f", {len(missing_nl)} samples lack NL (give --nl FILE)" if missing_nl else "")
    )


def _task(
    plan: _Plan, checking: _Checking, config: GenerateConfig, k: int, refine: int, beq: bool
) -> Task:
    """The Inspect task: the plan's samples, a model (or the ground truth) answering (and
    revising ``refine`` rounds), the checker opened now (a missing backend stops the run
    before any model call)."""
    samples, truth = plan.samples, plan.ground_truth
    answers = 1 if truth else k * (1 + refine)
    generations(len(samples) * answers, f"{len(samples)} samples x k={k} x (1 + refine={refine})")
    evaluate, attempt, compare = _evaluator(checking)
    counting = plan.selection.counting
    solvers = [system_first(system_prompt()), generate(tool_calls="none")]
    if refine and attempt is not None:
        solvers.append(compile_feedback(attempt, _extract(counting), refine))
    return Task(
        version=BEHAVIOUR.version,
        dataset=MemoryDataset(samples, name="t2"),
        solver=ground_truth_answer() if truth else solvers,
        scorer=t2_scorer(evaluate, counting, compare if beq else None),
        epochs=Epochs(1 if truth else k),
        config=config,
        metadata=plain(
            _with_rounds(_run_metadata(plan, checking, k, refine, beq), plan, k, refine, config)
        ),
    )


def _with_rounds(
    meta: RunMetadata, plan: _Plan, k: int, refine: int, config: GenerateConfig
) -> RunMetadata:
    """With ``refine``, what a plan must count per sample: up to ``k x (1 + refine)`` calls,
    each reading at least the sample's first prompt."""
    if not refine:
        return meta
    calls = k * (1 + refine)
    meta["model_calls"] = {str(s.id): calls for s in plan.samples}
    meta["max_tokens"] = int(config.max_tokens or 0)
    meta["prompt_chars"] = {str(s.id): calls * _prompt_chars(s.input) for s in plan.samples}
    return meta


def _prompt_chars(prompt: str | list[ChatMessage]) -> int:
    """The characters of a sample's first prompt (all its turns)."""
    if isinstance(prompt, str):
        return len(prompt)
    return sum(len(message.text) for message in prompt)


def _run_metadata(plan: _Plan, checking: _Checking, k: int, refine: int, beq: bool) -> RunMetadata:
    """What the log records of the run: the data, the contexts, the record funnel, and every
    planned record with its rows, its dependents (as ``successors``, the test units a missing
    sample is counted with, as in :func:`_metadata`) and whether it is Hard."""
    selection = plan.selection
    return RunMetadata(
        data=selection.data,
        contexts=[GROUND_TRUTH] if plan.ground_truth else [c.name for c in plan.contexts],
        ground_truth=plan.ground_truth,
        k=k,
        records=selection.audit.total,
        evaluated_records=len(selection.chosen),
        min_successors=selection.min_successors,
        rules=selection.counting.value,
        nl_file=", ".join(plan.nl_paths) or None,
        nl_fallback=plan.nl_fallback,
        planned=[
            {
                "id": r.id,
                "rows": rows,
                "successors": selection.dependents[r.id],
                "hard": is_hard(r.target_code),
            }
            for r, rows in selection.chosen
        ],
        skipped=plan.skipped,
        executor=checking.executor,
        repo=checking.repo_spec,
        lake_bounds=asdict(checking.repo.bounds) if checking.repo else None,
        shots=0 if plan.ground_truth else plan.exemplars.shots,
        shot_pool=plan.exemplars.name,
        refine=refine,
        beq=beq,
        untested=checking.untested,
    )


def _evaluator(checking: _Checking) -> tuple[Evaluate, Attempting | None, Compare | None]:
    """Open what checks (a Lean checker, or project copies) and close it with the scorer;
    with it, how an answer is tried between rounds of refinement (the file track's; None in
    the repository track, where :func:`_refine_rounds` refuses ``refine``), and how a theorem
    answer is compared with the original (``beq``; likewise file track only)."""
    if checking.repo is not None:
        workspaces = Workspaces(checking.repo)
        in_repo: Evaluate = partial(evaluate_in_repo, workspaces=workspaces)
        weakref.finalize(in_repo, workspaces.close)
        return in_repo, None, None
    checker = open_checker(
        checking.lean,
        executor=checking.executor,
        ray=checking.ray,
        cache=VerdictCache(),
        allow_unsandboxed=checking.allow_unsandboxed,
        allow_untested=checking.allow_untested,
    )
    in_lean: Evaluate = partial(
        evaluate_answer, check=checker.check_many, timeout_s=checking.timeout_s
    )
    weakref.finalize(in_lean, checker.close)
    attempt = partial(compile_attempt, check=checker.check_many, timeout_s=checking.timeout_s)
    compare = partial(equivalence, check=checker.check_many, timeout_s=checking.timeout_s)
    return in_lean, attempt, compare


@solver
def compile_feedback(
    attempt: Attempting, extract: Callable[[str, TargetIdentity], Answer], rounds: int
) -> Solver:
    """Up to ``rounds`` times: try the latest answer's compile program and, while it fails,
    hand the errors back and ask again (:mod:`gapscope.t2.refine`). The statuses tried are
    kept in the sample's store (:data:`REFINE_TRAIL`). A check that raises ends the rounds:
    the scorer then settles the answer as it stands (:func:`gapscope.t2.evaluate.settle`)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        record = _record(state.metadata)
        trail: list[str] = []
        revisions = 0
        for _ in range(rounds):
            answer = extract(state.output.completion, target_identity(record))
            try:
                tried = await asyncio.to_thread(attempt, record, answer)
            except Exception as err:
                trail.append(f"{SampleOutcome.SERVER_ERROR}: {type(err).__name__}")
                break
            trail.append(tried.status)
            if tried.feedback is None:
                break
            state.messages.append(ChatMessageUser(content=tried.feedback))
            state = await generate(state, tool_calls="none")
            revisions += 1
        state.store.set(REFINE_TRAIL, trail)
        state.store.set(REFINE_REVISIONS, revisions)
        return state

    return solve


@solver
def ground_truth_answer() -> Solver:
    """The record's own target as the answer: no model is asked."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        code = state.metadata["target_code"]
        state.output = ModelOutput.from_content("ground-truth", f"```lean\n{code}\n```")
        return state

    return solve


def _extract(rules: Rules) -> Callable[[str, TargetIdentity], Answer]:
    """gapscope's extraction (name-checked) or the released pipeline's (name-blind)."""
    if rules is Rules.T2:
        return lambda reply, _target: released_answer(reply)
    return extract_answer


Compare = Callable[[T2Record, str], Equivalence | None]
"""BEqL/BEq+ of an answer's code against a record's target (:func:`gapscope.t2.beq.equivalence`)."""


def _beq_verdicts(
    compare: Compare | None, record: T2Record, code: str | None
) -> tuple[Equivalence | None, SampleScoreExtras]:
    """The answer's BEq verdicts (None: not asked, not a theorem, or the comparison failed),
    with what the log keeps about them: the strategy that proved them, or why the comparison
    failed (``beq_error``)."""
    if compare is None or code is None:
        return None, {}
    try:
        found = compare(record, code)
    except Exception as err:
        return None, {"beq_error": f"{type(err).__name__}: {err}"}
    if found is None:
        return None, {}
    return found, {"beq_strategy": found.strategy}


@scorer(metrics=[accuracy()])
def t2_scorer(
    evaluate: Evaluate, rules: Rules = Rules.GAPSCOPE, compare: Compare | None = None
) -> Scorer:
    """CORRECT when TA (parity) holds; every verdict is in the score's metadata
    (:class:`gapscope.t2.contract.ScoredSample`, the verdict's detail and
    :class:`gapscope.t2.contract.SampleScoreExtras`), with the answer's BLEU against the
    ground truth and, with ``compare``, its BEq verdicts (only for an answer Lean checked)."""
    extract = _extract(rules)

    def judged(
        reply: str, record: T2Record, meta: dict[str, Any]
    ) -> tuple[Answer, SampleResult, ScoredSample]:
        """Extraction, checks and text metrics: CPU-bound on a long reply (lexing Lean), so
        run in a worker thread, where the event loop goes on with the other samples."""
        answer = extract(reply, target_identity(record))
        result = settle(evaluate, record, answer)
        scored = ScoredSample(
            record=record.id,
            context=meta["context"],
            outcome=result.outcome,
            compiles=result.compiles,
            ta=result.ta,
            ta_strict=result.ta_strict,
            graded=result.graded,
            successors=result.successors or meta["successors"],
            hard=meta["hard"],
            rows=meta["rows"],
            bleu=sentence_bleu(answer.code, record.target_code, BleuMetric.SACREBLEU),
            bleu_t2=sentence_bleu(answer.code, record.target_code, BleuMetric.T2),
            exact_match=exact_match(answer.code, record.target_code),
            selftest=result.selftest,
        )
        return answer, result, scored

    async def score(state: TaskState, target: Target) -> Score:
        record = _record(state.metadata)
        answer, result, scored = await asyncio.to_thread(
            judged, state.output.completion, record, state.metadata
        )
        checked = answer.code if result.outcome == SampleOutcome.CHECKED else None
        found, beq_notes = await asyncio.to_thread(_beq_verdicts, compare, record, checked)
        scored = replace(
            scored,
            refine_trail=tuple(state.store.get(REFINE_TRAIL, [])),
            refine_revisions=state.store.get(REFINE_REVISIONS, 0),
            beql=found.beql if found else None,
            beq_plus=found.beq_plus if found else None,
        )
        extras: SampleScoreExtras = {"dependents": state.metadata["dependents"], **beq_notes}
        return Score(
            value=CORRECT if result.ta else INCORRECT,
            answer=answer.code,
            explanation=f"{result.outcome}: {result.detail}" if result.detail else result.outcome,
            metadata={**result.to_dict(), **scored.to_metadata(), **extras},
        )

    return score


BEHAVIOUR = Behaviour(
    version=1,
    prompts=prompting.template.paths(
        "system",
        "section_header",
        "section_before",
        "section_nl",
        "section_after",
        "request",
        "instructions_definition",
        "instructions_theorem",
        "shot_answer",
        "refine_unchecked",
        "refine_timeout",
        "refine_errors",
    ),
    code=(prompting, shots, refine, extract, compile_feedback, ground_truth_answer, t2_scorer),
)
"""What this task's version covers (:mod:`gapscope.task_version`): bump ``version`` when the
fingerprint test says its prompts, the exemplars, the refinement loop, the answer extraction
or the scorer changed."""
