"""Two rule sets for what a T2 run counts: gapscope's (the default) and the released evaluator's.

A number next to the paper's needs the paper's counting, and the released evaluator
(``ldilab/T2``, ``src/evaluations/evaluate_server.py``, read for docs/t2.md) counts
differently from gapscope on the same Lean verdicts:

- **records**. gapscope: audited; rows with a defect or fewer than ``min_successors``
  successors are skipped and listed. t2: every row of the data file (a row that does not
  parse cannot be evaluated and is listed).
- **duplicate ids**. gapscope: the first row is kept, later ones skipped. t2: every row
  is in the denominator, the *last* row with the id is the one evaluated, and it has one
  result: the id's other rows count as failures (its generation harness keys by id).
- **the answer**. gapscope: the last ``lean``/``lean4`` block (any case), ``import`` lines
  dropped; a declaration under another name is ``renamed`` and not checked. t2: the
  generation harness's parser (:func:`gapscope.t2.extract.released_answer`), fences
  stripped, imports kept, the name never checked; an empty result is checked as it is (the
  target's slot left empty: compile then checks the code before alone).
- **backend failures**. gapscope: ``server_error``, out of every denominator (a failure the
  answer caused, ``broke_check``, stays in). t2: a failure.
- **a record with no sample in the log** (the run stopped first). gapscope: not counted.
  t2: ``missing``, a failure (the released evaluator's denominator is the data file).
- **k samples**. gapscope: the mean over a record's samples. t2: pass@k, the record passes
  when any of its samples passes.
- **an NL setting without NL**. gapscope: the sample is skipped (``missing_nl``). t2: it is
  ``missing``, a failure (T2 generates only ids its informalization file describes).
- **BLEU**. gapscope: sacrebleu's usual sentence BLEU (13a tokens, exponential smoothing,
  effective order). t2: the released BLEU-4 (whitespace tokens, no smoothing), through
  sacrebleu's configuration that equals it (:mod:`gapscope.t2.bleu`). Every sample keeps
  both; the rules pick the one that makes the buckets.
- **the track**. t2 is the existing-track evaluator's counting (``evaluate_server.py``);
  the research evaluator (``evaluate_research.py``: a bare ``lake build``, compile only after
  a failed build) is not reproduced, so ``--rules t2`` refuses ``--repo``.

Both rule sets screen every answer before Lean sees it (a forbidden command is a failure
under ``t2`` too: T2 would send it to Lean; gapscope never does), build the same two programs
and read the same verdicts, so a difference between the two numbers is counting only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from gapscope.t2.bleu import BleuMetric
from gapscope.t2.records import T2Record


class Rules(StrEnum):
    GAPSCOPE = "gapscope"
    T2 = "t2"


def parse_rules(value: str) -> Rules:
    """``gapscope`` or ``t2``; ValueError naming the parameter otherwise."""
    try:
        return Rules(value.strip().lower())
    except ValueError:
        choices = ", ".join(r.value for r in Rules)
        raise ValueError(f"rules must be one of {choices}, got {value!r}") from None


def bleu_metric(rules: Rules) -> BleuMetric:
    """The BLEU that makes a run's buckets: the released one under the released rules."""
    return BleuMetric.T2 if rules is Rules.T2 else BleuMetric.SACREBLEU


@dataclass(frozen=True)
class Row:
    """One record as the released evaluator counts it: the row it evaluates for an id (the
    last one) and how many rows of the file carry that id (each is one unit of the
    denominator)."""

    record: T2Record
    rows: int


def released_rows(records: Sequence[T2Record]) -> list[Row]:
    """Every id once, in order of first appearance, with its last row and its row count.

    The released evaluator keys its reference records by id (``{r["id"]: r}``), so a later row
    replaces an earlier one, while its denominator is the length of the file.
    """
    last: dict[str, T2Record] = {}
    count: dict[str, int] = {}
    for record in records:
        last[record.id] = record
        count[record.id] = count.get(record.id, 0) + 1
    return [Row(last[key], count[key]) for key in last]
