"""Few-shot exemplars for T2 prompts (``shots``): which records, and the turns they become.

The paper compares its zero-shot prompts with 2-shot ones (2-shot does not close the gap and
sometimes lowers Hard TA) without saying which exemplars it showed. The release says how its
harness shows them (``expand_langchain`` ``prompt/chat.py``: every row of a dataset named
``example`` becomes a user turn rendered with the target's own template, followed by an
assistant turn; the same rows for every target, sorted by ``id``) and where they come from:
T2 records of the *existing* track, the ``prop`` file for a prop target and the ``noprop``
file for the others (``experiments/sources/informalized-example/*.yaml``; the file itself was
not shipped). gapscope follows that and writes down what the release leaves open:

- the pool is a file of T2 records (``shot_pool``; default: the run's own data file);
- an exemplar has the target's type: a theorem for a Hard target, a definition otherwise;
- its target is complete (has a body, balanced brackets), and a context that shows the NL
  shows the exemplar's NL too, so an exemplar without one is passed over;
- it must not give the answer away: a record whose before, target or after code contains the
  target's own code (the target itself, a duplicate row, another declaration of the same
  file) is never an exemplar;
- of what is left, the first ``shots`` by ``id`` (the harness's ``sort_key: id``), one per id
  and per target text, so every target of a kind sees the same exemplars unless one of them
  would leak its answer.

The exemplar's answer turn is its own ``target_code`` in a ``lean`` block after a one-line
THOUGHT (``prompts/shot_answer.txt``): the release's answer template is ``{{ thoughts }}`` and
a lean block of ``{{ formal_proof }}``, fields its example rows do not define, so what its
answer turns held is not known.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gapscope.t2.declarations import has_body, is_hard, unbalanced_bracket
from gapscope.t2.prompting import Context, template, user_prompt
from gapscope.t2.records import T2Record
from gapscope.t2.successors import target_identity


@dataclass(frozen=True)
class Exemplar:
    """One worked example: a record and the NL its prompt shows."""

    record: T2Record
    nl: str

    def turns(self, context: Context) -> tuple[str, str]:
        """The user turn (the exemplar's own prompt under ``context``) and the answer turn."""
        target = target_identity(self.record)
        question = user_prompt(self.record, target, context, self.nl)
        answer = template("shot_answer").format(
            name=target.name, code=self.record.target_code.strip("\n")
        )
        return question, answer


def _complete(record: T2Record) -> bool:
    """A target an answer can be: it reaches its body and its brackets close."""
    return has_body(record.target_code) and unbalanced_bracket(record.target_code) is None


def _gives_away(candidate: T2Record, target: T2Record) -> bool:
    """Whether showing ``candidate`` would show ``target``'s own code."""
    code = target.target_code.strip()
    parts = (candidate.before_target_code, candidate.target_code, candidate.after_target_code)
    return any(code in part for part in parts)


def choose_exemplars(
    pool: Sequence[T2Record],
    target: T2Record,
    shots: int,
    context: Context,
    nl_of: Callable[[T2Record], str],
    pool_name: str,
) -> list[Exemplar]:
    """The ``shots`` exemplars for ``target`` under ``context`` (the module's policy).

    ValueError, naming the pool, the target and what was asked, when the pool has fewer.
    """
    if shots == 0:
        return []
    hard = is_hard(target.target_code)
    chosen: list[Exemplar] = []
    seen_ids: set[str] = set()
    seen_code: set[str] = set()
    for candidate in sorted(pool, key=lambda r: r.id):
        code = candidate.target_code.strip()
        if candidate.id in seen_ids or code in seen_code:
            continue
        if is_hard(candidate.target_code) != hard or not _complete(candidate):
            continue
        if _gives_away(candidate, target):
            continue
        nl = nl_of(candidate)
        if context.nl and not nl.strip():
            continue
        chosen.append(Exemplar(candidate, nl))
        seen_ids.add(candidate.id)
        seen_code.add(code)
        if len(chosen) == shots:
            return chosen
    kind = "theorem" if hard else "definition"
    raise ValueError(
        f"shots={shots}: shot_pool {pool_name!r} has {len(chosen)} usable {kind} exemplar(s)"
        f" for {target.id} under context {context.name} (an exemplar has the target's type,"
        " a complete target, NL when the context shows it, and does not contain the target's"
        " code); give a larger shot_pool or fewer shots"
    )
