"""MATH hard-100: the paper's external comparator beside the diagnostic (Section 3, Appendix H).

The paper reports each model's accuracy on 100 level-5 problems of MATH500's test split as
pass@1, the mean single-rollout correctness over eight rollouts (OutcomeRL-2K 0.654,
MilestoneRL-2K 0.634 at 16K; +20.0 and +18.0 points over Qwen3-8B-Base's 0.454), and we add
pass@8 (solved by any of the eight). The release does not re-ship the problems, and no simple
rule picks its 100 of MATH500's 134 level-5 problems (neither the first 100 in file or id
order nor a seeded sample), so the selection is read from the release's own per-problem
results (``data/math_hard100_panel_16k.jsonl``: ``{model, pid, n_correct, k}`` with the MATH
``unique_id`` as pid) or from a plain list of ids, and the problems from a MATH500 copy.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from gapscope.ladder.compile import TeacherProblem
from gapscope.ladder.problem_sets import load_problem_set
from gapscope.stats import mean_pass_at_k

HARD100_SIZE = 100
PAPER_ROLLOUTS = 8
"""The paper's rollouts per problem: pass@1 is their mean correctness, pass@8 any correct."""
PID_PREFIX = "math500-"
"""``load_problem_set`` names a MATH500 problem ``math500-<unique_id>``."""


class Hard100Error(ValueError):
    """An id list or a problem set that cannot give the hard-100 selection; names the file."""


def read_hard100_ids(source: Path) -> list[str]:
    """The MATH ``unique_id`` s in ``source``, first-seen order: a JSONL of released results
    (every record's ``pid``) or one id per line."""
    ids: list[str] = []
    for number, raw in enumerate(source.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("{"):
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise Hard100Error(f"{source}:{number}: not JSON ({exc.msg})") from None
            pid = record.get("pid") if isinstance(record, dict) else None
            if not isinstance(pid, str) or not pid:
                raise Hard100Error(f"{source}:{number}: a record without a 'pid' string")
            line = pid
        if line not in ids:
            ids.append(line)
    if len(ids) != HARD100_SIZE:
        raise Hard100Error(f"{source}: {len(ids)} distinct problem ids, expected {HARD100_SIZE}")
    return ids


def load_hard100(math500: str, ids: Path) -> list[TeacherProblem]:
    """The hard-100 problems, in the order ``ids`` lists them, from a MATH500 copy."""
    problems, errors = load_problem_set("math500", math500)
    by_id = {p.pid.removeprefix(PID_PREFIX): p for p in problems}
    wanted = read_hard100_ids(ids)
    missing = [i for i in wanted if i not in by_id]
    if missing:
        skipped = f" ({len(errors)} record(s) skipped: {errors[0]})" if errors else ""
        raise Hard100Error(
            f"{math500}: {len(missing)} of the {HARD100_SIZE} ids are not in this MATH500 copy "
            f"(first: {missing[0]}){skipped}"
        )
    return [by_id[i] for i in wanted]


@dataclass(frozen=True)
class Hard100Score:
    """One model on the hard-100 problems: mean single-rollout correctness and any-of-k."""

    model: str
    n_problems: int
    rollouts: int
    pass_at_1: float
    pass_at_k: float

    def to_dict(self) -> dict[str, object]:
        return {
            "model": self.model,
            "n_problems": self.n_problems,
            "rollouts": self.rollouts,
            "pass_at_1": self.pass_at_1,
            f"pass_at_{self.rollouts}": self.pass_at_k,
        }


def score_hard100(model: str, counts: Mapping[str, tuple[int, int]]) -> Hard100Score:
    """pass@1 and pass@k from ``{pid: (rollouts, correct)}``, k the fewest rollouts any
    problem has (pass@k needs k rollouts of every problem)."""
    if not counts:
        raise Hard100Error(f"{model}: no graded problem")
    k = min(n for n, _ in counts.values())
    pairs = list(counts.values())
    return Hard100Score(model, len(counts), k, mean_pass_at_k(pairs, 1), mean_pass_at_k(pairs, k))


def gains(scores: Sequence[Hard100Score], baseline: str) -> dict[str, float]:
    """Each model's pass@1 minus ``baseline`` 's, in points (the paper's +20.0 / +18.0)."""
    base = next((s for s in scores if s.model == baseline), None)
    if base is None:
        raise Hard100Error(f"baseline {baseline!r} is none of {', '.join(s.model for s in scores)}")
    return {s.model: 100 * (s.pass_at_1 - base.pass_at_1) for s in scores}
