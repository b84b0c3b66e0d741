"""What the T2 task writes into its log, declared once for the task and its reader
(:mod:`gapscope.analysis.t2`): a renamed key is then a type error on both sides."""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

TASK = "t2"


class PlannedRecord(TypedDict):
    """A record the run set out to evaluate: its id, its rows in the data file, its number of
    successors and whether it is Hard (what a missing sample is counted with)."""

    id: str
    rows: int
    successors: int
    hard: bool


class RunMetadata(TypedDict):
    """The log's task metadata: the data, the NL/statement contexts, the record funnel, the
    counting ``rules`` (:mod:`gapscope.t2.rules`), and ``nl_fallback``: the records whose NL
    came from their ``natural_language`` field (not from ``nl_file``); ``planned``: every
    record the run set out to evaluate (the released rules count one without a sample as a
    failure); ``shots``: worked exemplars before each question, from ``shot_pool``
    (:mod:`gapscope.t2.shots`; 0 and None in a zero-shot run or a log written before);
    ``refine``: rounds of compile feedback after the first answer (:mod:`gapscope.t2.refine`;
    0 in a log written before); ``beq``: whether theorem answers were compared with the
    original by BEqL/BEq+ (:mod:`gapscope.t2.beq`); ``untested``: the checking path without a
    known-answer self-test the user allowed (``kimina``, ``lake-build``:
    :mod:`gapscope.t2.untested`; None otherwise and in a log written before)."""

    data: str
    contexts: list[str]
    ground_truth: bool
    k: int
    records: int
    evaluated_records: int
    min_successors: int
    rules: str
    nl_file: str | None
    nl_fallback: list[str]
    planned: list[PlannedRecord]
    skipped: dict[str, list[str]]
    executor: str
    repo: str | None
    shots: int
    shot_pool: str | None
    refine: int
    beq: bool
    untested: NotRequired[str | None]
    model_calls: NotRequired[dict[str, int]]
    """With ``refine``: per sample, the most generations it may take (``k`` x (1 + refine)),
    which a plan counts instead of one per sample and epoch."""
    max_tokens: NotRequired[int]
    prompt_chars: NotRequired[dict[str, int]]
    """With ``refine``: per sample, the characters its calls read at least (each round reads
    the first prompt again, besides the answers and errors before it)."""


class SampleScoreMetadata(TypedDict, total=False):
    """One generation's score metadata: the record, the context, and its outcome
    (:meth:`gapscope.t2.evaluate.SampleResult.to_dict` supplies the rest). ``successors``: the
    test units (the dependents in the record's file; in the repository track also the modules
    that import the target's); ``dependents``: the declarations after the target that use it,
    directly or transitively; ``hard``: the target is a theorem (T2 Hard,
    :func:`gapscope.t2.declarations.is_hard`); ``rows``: rows of the data file with the
    record's id (the released rules count each); ``bleu``: sacrebleu's sentence BLEU of the
    answer against ``target_code``, ``bleu_t2`` the released evaluator's BLEU-4 and
    ``exact_match`` its exact match (:mod:`gapscope.t2.bleu`); ``refine_trail``: with
    ``refine``, the status of each answer tried before the last (``compiles``, ``lean_error``,
    ``timeout``, ``no_answer``, ...; :mod:`gapscope.t2.refine`), empty without;
    ``refine_revisions``: how many times the errors were handed back and the model answered
    again; ``beql``/``beq_plus``: with ``beq``, the answer's equivalence verdicts (None: not a
    theorem, or no statement), ``beq_strategy`` what proved it, ``beq_error`` why the
    comparison failed; ``selftest``: whether the path that checked the answer passed its
    known-answer self-test here (False on an untested path the user allowed,
    :mod:`gapscope.t2.untested`; None where Lean never saw the answer or in an older log)."""

    record: str
    context: str
    outcome: str
    compiles: bool
    ta: bool
    ta_strict: bool
    graded: float | None
    successors: int
    dependents: int
    hard: bool
    rows: int
    bleu: float
    bleu_t2: float
    exact_match: bool
    refine_trail: list[str]
    refine_revisions: int
    beql: bool | None
    beq_plus: bool | None
    beq_strategy: str | None
    beq_error: str
    successors_passed: int
    failing_successors: list[str]
    compile_status: str | None
    full_status: str | None
    detail: str
    errors: dict[str, Any]
    selftest: bool | None
