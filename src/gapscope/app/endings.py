"""How a run ended, read from the logs it wrote on disk, not from what Inspect returned.

After a Ctrl-C, ``eval_set`` can return "success" (and print "Completed all tasks ...
successfully") while the logs of the tasks it was running say ``cancelled``. The logs are the
record a rerun and every report read, so they decide the exit code: 0 only when every task's
newest log is ``success``, 130 after an interrupt (a ``KeyboardInterrupt``, or any log left
``cancelled``), 1 when a task ended in ``error``, is still ``started`` or never got a log.
The lines :meth:`Ending.lines` returns open the printed summary and the report: what
finished, what did not, and what rerunning the same command will do.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

EXIT_OK, EXIT_RUN_FAILED, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130
"""Every command's exit codes (``app.kit`` re-exports them): defined here, where how a run
ended decides between the first, second and last."""


@dataclass(frozen=True)
class TaskEnd:
    """The final state of one task: its newest log's status and how many samples it scored."""

    log: str
    task: str
    model: str
    status: str
    """Inspect's: success | cancelled | error | started."""
    scored: int
    total: int
    created: str = ""
    task_id: str = ""
    cut_off: int = 0
    """Samples that could not reach the model's endpoint (a server gone mid-run)."""
    endpoint: str = ""
    """Where the model's requests went (its base URL), when known."""

    @property
    def finished(self) -> bool:
        return self.status == "success"

    def describe(self) -> str:
        return (
            f"{self.task} on {self.model}: {self.status}, {self.scored} of {self.total} "
            f"samples scored ({self.log})"
        )


def read_end(path: Path) -> TaskEnd:
    """The status and scored-sample count of the log at ``path`` (header and sample summaries
    only: no sample is read whole)."""
    from inspect_ai.log import read_eval_log, read_eval_log_sample_summaries

    from gapscope.analysis import CUT_OFF, error_cause

    header = read_eval_log(str(path), header_only=True)
    total = (header.eval.dataset.samples or 0) * (header.eval.config.epochs or 1)
    scored, cut_off = total, 0
    if header.status != "success":
        summaries = read_eval_log_sample_summaries(str(path))
        scored = sum(1 for s in summaries if s.scores and s.error is None)
        cut_off = sum(1 for s in summaries if s.error and error_cause(s.error) == CUT_OFF)
    return TaskEnd(
        log=str(path),
        task=header.eval.task.split("/")[-1],
        model=header.eval.model,
        status=header.status,
        scored=scored,
        total=total,
        created=header.eval.created,
        task_id=header.eval.task_id,
        cut_off=cut_off,
        endpoint=endpoint_of(header.eval.model, header.eval.model_base_url),
    )


def endpoint_of(model: str, recorded: str | None) -> str:
    """Where requests to ``model`` went: the base URL its log recorded, else the one Inspect's
    ``openai-api/SERVICE/NAME`` provider reads from ``SERVICE_BASE_URL`` (``openai/``:
    ``OPENAI_BASE_URL``); "" when neither says."""
    if recorded:
        return recorded
    parts = model.split("/")
    service = parts[1] if parts[0] == "openai-api" and len(parts) > 2 else parts[0]
    return os.environ.get(f"{service.upper().replace('-', '_')}_BASE_URL", "")


def newest_per_task(ends: Iterable[TaskEnd]) -> list[TaskEnd]:
    """Of logs sharing a task id (a task, its retries and resumptions) only the newest: it is
    the task's state now, and what a rerun continues."""
    newest: dict[str, TaskEnd] = {}
    for end in ends:
        kept = newest.get(end.task_id or end.log)
        if kept is None or _created(kept) <= _created(end):
            newest[end.task_id or end.log] = end
    return list(newest.values())


def _created(end: TaskEnd) -> datetime:
    return datetime.fromisoformat(end.created) if end.created else datetime.min


@dataclass(frozen=True)
class Ending:
    """Every task a command ran, as its logs say it ended."""

    tasks: Sequence[TaskEnd]
    missing: int = 0
    """Tasks of the command that never got a log (stopped before they started)."""
    interrupted: bool = False
    """The user stopped the command (Ctrl-C reached it as KeyboardInterrupt)."""
    unit: str = "tasks"
    rerun: str = ""
    """What rerunning the same command does, for a command whose rerun resumes."""
    notes: list[str] = field(default_factory=list)

    @property
    def finished(self) -> list[TaskEnd]:
        return [t for t in self.tasks if t.finished]

    @property
    def unfinished(self) -> list[TaskEnd]:
        return [t for t in self.tasks if not t.finished]

    @property
    def code(self) -> int:
        """0 all finished; 130 interrupted (or a log left cancelled); 1 otherwise."""
        if self.interrupted or any(t.status == "cancelled" for t in self.tasks):
            return EXIT_INTERRUPTED
        if self.unfinished or self.missing:
            return EXIT_RUN_FAILED
        return EXIT_OK

    @property
    def complete(self) -> bool:
        return self.code == EXIT_OK

    def headline(self) -> str:
        """One line: how many finished and how many did not."""
        total = len(self.tasks) + self.missing
        if self.complete:
            return f"all {total} {self.unit} finished"
        how = "interrupted" if self.code == EXIT_INTERRUPTED else "did not finish"
        left = len(self.unfinished) + self.missing
        return f"{how}: {len(self.finished)} of {total} {self.unit} finished, {left} did not"

    def lines(self) -> list[str]:
        """The headline, each unfinished task, and what a rerun does."""
        if self.complete:
            return [self.headline()]
        out = [self.headline()]
        out += [f"not finished: {t.describe()}" for t in self.unfinished]
        if self.missing:
            out.append(f"not started: {self.missing} {self.unit} (no log yet)")
        out += self.endpoints_gone()
        if self.rerun:
            out.append(self.rerun)
        return out + self.notes

    def endpoints_gone(self) -> list[str]:
        """One line per endpoint that went away mid-run: its URL and how many samples could
        not reach it (instead of one raw ``RetryError(APIConnectionError)`` per sample)."""
        lost: dict[str, list[TaskEnd]] = {}
        for task in self.unfinished:
            if task.cut_off:
                lost.setdefault(task.endpoint or task.model, []).append(task)
        return [
            f"endpoint gone: {where} stopped answering; {sum(t.cut_off for t in tasks)} samples "
            f"of {', '.join(dict.fromkeys(t.task for t in tasks))} could not reach it "
            "(connection error): restart it, then rerun"
            for where, tasks in lost.items()
        ]

    def to_dict(self) -> dict[str, object]:
        return {
            "complete": self.complete,
            "finished": [t.log for t in self.finished],
            "unfinished": {t.log: t.status for t in self.unfinished},
            "not_started": self.missing,
            "rerun": None if self.complete else self.rerun or None,
            "endpoints_gone": self.endpoints_gone(),
        }


def study_ending(log_dir: Path, expected: int, *, interrupted: bool) -> Ending:
    """How a study (one ``eval_set`` over ``log_dir``) stands: the newest log of each of its
    tasks. ``eval_set`` lists the study's task ids in ``eval-set.json`` before it runs any;
    a log of another task (a steering sweep's in the same directory) is not the study's."""
    ours = _eval_set_task_ids(log_dir)
    ends = newest_per_task(
        end
        for end in (read_end(p) for p in sorted(log_dir.glob("*.eval")))
        if ours is None or end.task_id in ours
    )
    unfinished = [t for t in ends if not t.finished]
    missing = max((len(ours) if ours is not None else expected) - len(ends), 0)
    kept = sum(t.scored for t in unfinished)
    rerun = (
        "rerun the same command to finish it: "
        f"the {len(ends) - len(unfinished)} finished tasks are skipped, the {len(unfinished)} "
        f"unfinished ones resume (their {kept} scored samples are kept)"
        + (f" and the {missing} not started run" if missing else "")
    )
    return Ending(ends, missing, interrupted, "tasks", rerun)


def _eval_set_task_ids(log_dir: Path) -> set[str] | None:
    """The task ids ``eval_set`` recorded for ``log_dir`` (None before it wrote them)."""
    try:
        info = json.loads((log_dir / "eval-set.json").read_text(encoding="utf-8"))
        return {str(t["task_id"]) for t in info["tasks"]}
    except (OSError, ValueError, KeyError, TypeError):
        return None
