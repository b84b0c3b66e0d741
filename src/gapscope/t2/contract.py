"""What the T2 task writes into its log, declared once for the task and its reader
(:mod:`gapscope.analysis.t2`): a renamed key is then a type error on both sides. A sample's
counted fields are a dataclass (:class:`ScoredSample`, what the metrics take), written and
read back by its field names."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, NotRequired, TypedDict

from gapscope.t2.bleu import BleuMetric
from gapscope.t2.refine import COMPILES

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
    lake_bounds: NotRequired[dict[str, float] | None]
    """The repository track's bounds of one ``lake`` call (``memory_mb``, ``processes``,
    ``cpus``: what was asked; each score's ``bounds`` says how they held); None in the file
    track, absent in a log written before."""
    model_calls: NotRequired[dict[str, int]]
    """With ``refine``: per sample, the most generations it may take (``k`` x (1 + refine)),
    which a plan counts instead of one per sample and epoch."""
    max_tokens: NotRequired[int]
    prompt_chars: NotRequired[dict[str, int]]
    """With ``refine``: per sample, the characters its calls read at least (each round reads
    the first prompt again, besides the answers and errors before it)."""


@dataclass(frozen=True)
class ScoredSample:
    """One generation's counted fields, declared once: the scorer builds it (its keywords are
    checked), writes it into the score's metadata (:meth:`to_metadata`), the reader builds it
    back (:meth:`from_metadata`) and :mod:`gapscope.t2.metrics` counts it. Both directions go
    by this class's field names, so a renamed field renames the log key on both sides, and
    every use of the old name is a type error.

    ``successors``: the test units (the dependents in the record's file; in the repository
    track also the modules that import the target's); ``hard``: the target is a theorem (T2
    Hard, :func:`gapscope.t2.declarations.is_hard`); ``rows``: rows of the data file with the
    record's id (the released rules count each); ``bleu``: sacrebleu's sentence BLEU of the
    answer against ``target_code`` (:data:`BleuMetric.SACREBLEU`), ``bleu_t2`` the released
    evaluator's BLEU-4 (:data:`BleuMetric.T2`) and ``exact_match`` its exact match
    (:mod:`gapscope.t2.bleu`); ``refine_trail``: with ``refine``, the status of each answer
    tried before the last (``compiles``, ``lean_error``, ``timeout``, ``no_answer``, ...;
    :mod:`gapscope.t2.refine`), empty without; ``refine_revisions``: how many times the errors
    were handed back and the model answered again; ``beql``/``beq_plus``: with ``beq``, the
    answer's equivalence verdicts (None: not compared, not a theorem, or no statement);
    ``selftest``: whether the path that checked the answer passed its known-answer self-test
    here (False on an untested path the user allowed, :mod:`gapscope.t2.untested`; None where
    Lean never saw the answer or in an older log)."""

    record: str
    context: str
    outcome: str
    compiles: bool
    ta: bool
    ta_strict: bool
    graded: float | None
    successors: int
    hard: bool = False
    rows: int = 1
    bleu: float | None = None
    bleu_t2: float | None = None
    exact_match: bool | None = None
    refine_trail: tuple[str, ...] = ()
    refine_revisions: int = 0
    beql: bool | None = None
    beq_plus: bool | None = None
    selftest: bool | None = None

    @property
    def first_compiles(self) -> bool | None:
        """With ``refine``: whether the first answer compiled (None without refinement)."""
        return self.refine_trail[0] == COMPILES if self.refine_trail else None

    def bleu_of(self, metric: BleuMetric) -> float | None:
        """The sample's score under ``metric`` (None when the log has none)."""
        return self.bleu_t2 if metric is BleuMetric.T2 else self.bleu

    def to_metadata(self) -> dict[str, Any]:
        """Every field under its name, as a log holds it (JSON has lists, not tuples)."""
        return {f.name: _json(getattr(self, f.name)) for f in fields(self)}

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any], unscored: ScoredSample) -> ScoredSample:
        """``unscored`` (what the sample's own metadata says, failing) with every field the
        score's ``metadata`` holds: a sample that errored before scoring, or a log written
        before a field was added, keeps ``unscored``'s value for what is missing."""
        logged: dict[str, Any] = {
            f.name: _frozen(metadata[f.name]) for f in fields(cls) if f.name in metadata
        }
        return replace(unscored, **logged)


def _json(value: object) -> object:
    """A tuple as the JSON list a log holds (an in-memory log compares equal to a read one)."""
    return list(value) if isinstance(value, tuple) else value


def _frozen(value: object) -> object:
    """A list read from a log as the tuple a frozen field holds."""
    return tuple(value) if isinstance(value, list) else value


class SampleScoreExtras(TypedDict, total=False):
    """What the score's metadata holds beside :class:`ScoredSample`'s fields and
    :meth:`gapscope.t2.evaluate.SampleResult.to_dict`'s verdict detail, for a reader of the
    log (nothing counts it): ``dependents``, the declarations after the target that use it,
    directly or transitively; with ``beq``, ``beq_strategy`` what proved the equivalence and
    ``beq_error`` why the comparison failed."""

    dependents: int
    beq_strategy: str | None
    beq_error: str
