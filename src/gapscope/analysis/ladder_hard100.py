"""MATH hard-100 readout: pass@1 and pass@k per model, from our logs or the release's panel.

A log of ``ladder_math_hard100`` holds one sample per (problem, rollout); the release's
``math_hard100_panel*.jsonl`` one ``{model, pid, n_correct, k}`` per (model, problem). Both
become ``{pid: (rollouts, correct)}`` per model and are scored alike, so our run and the
authors' sit in one table (the paper's Table 1 column "MATH hard-100", Appendix H). Only
what the model did is counted: a rollout the run never scored is left out of its problem's
count, and a problem with no scored rollout is not in the table's denominator.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from inspect_ai.scorer import CORRECT

from gapscope.analysis.logs import counted_samples, read_log, sample_score
from gapscope.ladder import HARD100_TASK, Hard100Error, Hard100Score, gains, score_hard100

if TYPE_CHECKING:
    from rich.console import Console


def read_hard100_log(path: Path | str, name: str | None = None) -> Hard100Score:
    """One model's hard-100 score from its log (named ``name`` or by the log's model)."""
    log = read_log(path, task=HARD100_TASK)
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for sample in counted_samples(log):
        score = sample_score(sample)
        if score is None:
            continue
        cell = counts[str(sample.id)]
        cell[0] += 1
        cell[1] += score.value == CORRECT
    graded = {pid: (n, c) for pid, (n, c) in counts.items()}
    return score_hard100(name or log.eval.model, graded)


def read_hard100_panel(path: Path) -> list[Hard100Score]:
    """Every model's score in a released panel file, in the order the models first appear."""
    counts: dict[str, dict[str, tuple[int, int]]] = {}
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not raw.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = json.loads(raw)
            model, pid = str(record["model"]), str(record["pid"])
            n, c = record["k"], record["n_correct"]
        except (json.JSONDecodeError, KeyError, TypeError):
            raise Hard100Error(
                f"{where}: expected a JSON object with model, pid, n_correct and k"
            ) from None
        if not (isinstance(n, int) and isinstance(c, int) and 0 <= c <= n and n >= 1):
            raise Hard100Error(f"{where}: n_correct {c!r} of k {n!r} is not a count")
        if pid in counts.setdefault(model, {}):
            raise Hard100Error(f"{where}: a second record for {model} on {pid}")
        counts[model][pid] = (n, c)
    if not counts:
        raise Hard100Error(f"{path}: no records")
    return [score_hard100(model, by_pid) for model, by_pid in counts.items()]


def hard100_details(scores: Sequence[Hard100Score], baseline: str | None) -> dict[str, object]:
    """The JSON details: every score and, with a baseline, each model's pass@1 gain in points."""
    return {
        "scores": [s.to_dict() for s in scores],
        "baseline": baseline,
        "pass_at_1_gain_points": gains(scores, baseline) if baseline else None,
    }


def print_hard100(scores: Sequence[Hard100Score], baseline: str | None, console: Console) -> None:
    """The readout in the paper's layout: pass@1 (and its gain over the baseline), pass@k."""
    from rich.table import Table

    table = Table(title="MATH hard-100 (pass@1: mean correctness over the rollouts)")
    for column in ("model", "problems", "rollouts", "pass@1", "gain (points)", "pass@k"):
        table.add_column(column, justify="left" if column == "model" else "right")
    gain = gains(scores, baseline) if baseline else {}
    for s in scores:
        delta = f"{gain[s.model]:+.1f}" if s.model in gain else "-"
        table.add_row(
            s.model,
            str(s.n_problems),
            str(s.rollouts),
            f"{s.pass_at_1:.3f}",
            delta,
            f"{s.pass_at_k:.3f}",
        )
    console.print(table)
