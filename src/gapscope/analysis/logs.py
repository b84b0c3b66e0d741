"""The one Inspect-log reader: every diagnostic's results come in through here.

A user hands a report command whatever is lying in a logs folder: a file from another
diagnostic, a half-written or corrupt ``.eval``, a directory. Each of those ends in a
:class:`LogError` naming the file and what was expected, never in a traceback from the zip or
JSON layer underneath (Inspect reports a corrupt ``.eval`` as ``ValueError: EOCD not found``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog, EvalSample
    from inspect_ai.scorer import Score


class LogError(Exception):
    """A log that cannot be read, or is not the diagnostic the caller asked for."""


def expand_log_paths(paths: Iterable[Path]) -> list[Path]:
    """Files as given; a directory contributes its ``.eval`` logs (recursively, sorted).

    Raises LogError for a path that does not exist or a directory without logs, so a typo is
    not silently reported as "no results".
    """
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            logs = sorted(p for p in path.rglob("*.eval") if p.is_file())
            if not logs:
                raise LogError(f"{path}: directory holds no .eval logs")
            found.extend(logs)
        elif path.exists():
            found.append(path)
        else:
            raise LogError(f"{path}: no such file or directory")
    return found


def log_path(location: str) -> Path:
    """The local file behind a log's ``location`` (a path, or a ``file:`` URI: Inspect writes
    ``file:///dir/x.eval`` for a new log and ``file:/dir/x.eval`` for one ``eval_set`` found)."""
    if location.startswith("file:"):
        return Path(unquote(urlparse(location).path))
    return Path(location)


def task_name(log: EvalLog) -> str:
    """The task's own name, without the registry package (``gapscope/onng`` -> ``onng``)."""
    return log.eval.task.split("/")[-1]


def read_log(path: Path | str, *, task: str | Sequence[str] | None = None) -> EvalLog:
    """Read one log with its samples; with ``task``, refuse a log of any other task."""
    from inspect_ai.log import read_eval_log

    location = str(path)
    if isinstance(path, Path) and path.is_dir():
        raise LogError(f"{path} is a directory; give a log file (or use a command that takes dirs)")
    try:
        log = read_eval_log(location)
    except FileNotFoundError:
        raise LogError(f"{location}: no such log file") from None
    except Exception as exc:  # zip, JSON and schema errors all mean "not a readable log"
        raise LogError(
            f"{location} is not a readable Inspect log (corrupt or truncated?): "
            f"{type(exc).__name__}: {exc}"
        ) from None
    if task is not None:
        require_task(log, task)
    return log


def require_task(log: EvalLog, task: str | Sequence[str]) -> None:
    """Raise LogError unless ``log`` comes from ``task`` (one name or several)."""
    wanted = (task,) if isinstance(task, str) else tuple(task)
    actual = task_name(log)
    if actual not in wanted:
        raise LogError(
            f"{log.location} is a {actual!r} log; this command reads "
            f"{' or '.join(repr(t) for t in wanted)} logs"
        )


@dataclass(frozen=True)
class RunInfo:
    """What a log says about its run, apart from the results."""

    task: str
    model: str
    task_args: dict[str, Any]
    metadata: dict[str, Any]
    """The task's own record of its settings (preset, problems, the steering provenance)."""
    status: str
    location: str
    started_at: str | None
    completed_at: str | None
    task_id: str = ""
    """Inspect's id of the task, kept by ``inspect eval-retry``: a retry and its original
    share it."""
    created: str = ""
    left_out: int = 0
    """Samples of a run that did not finish that count nowhere (never scored or never run)."""
    expected: int = 0
    """Samples the run was to have (dataset samples x epochs)."""

    @property
    def created_at(self) -> datetime:
        """When the run was created (a retry is created after the run it resumes)."""
        return (
            datetime.fromisoformat(self.created)
            if self.created
            else datetime.min.replace(tzinfo=UTC)
        )

    @property
    def finished(self) -> bool:
        return self.status == "success"

    def note(self) -> str | None:
        """What a table of a run that did not finish must say (None for a finished run)."""
        if self.finished:
            return None
        return (
            f"{self.location}: the run did not finish (status {self.status}); "
            f"{self.left_out} of {self.expected} samples were never scored and are left out "
            "of every count (resume it with inspect eval-retry)"
        )

    @property
    def duration_s(self) -> float | None:
        """Wall-clock seconds of the run, when both timestamps were recorded."""
        if not self.started_at or not self.completed_at:
            return None
        start = datetime.fromisoformat(self.started_at)
        end = datetime.fromisoformat(self.completed_at)
        return (end - start).total_seconds()


def run_info(log: EvalLog) -> RunInfo:
    """Model, task arguments, status, timing and completeness of ``log``."""
    expected = (log.eval.dataset.samples or 0) * (log.eval.config.epochs or 1)
    return RunInfo(
        task=task_name(log),
        model=log.eval.model,
        task_args=dict(log.eval.task_args or {}),
        metadata=dict(log.eval.metadata or {}),
        status=log.status,
        location=log.location,
        started_at=log.stats.started_at or None,
        completed_at=log.stats.completed_at or None,
        task_id=log.eval.task_id,
        created=log.eval.created,
        left_out=0 if log.status == "success" else max(expected - len(counted_samples(log)), 0),
        expected=expected,
    )


def sample_score(sample: EvalSample) -> Score | None:
    """The sample's score (every gapscope task has exactly one scorer)."""
    return next(iter((sample.scores or {}).values()), None)


@contextlib.contextmanager
def malformed_sample(log: EvalLog, sample: EvalSample) -> Iterator[None]:
    """Read one sample's content inside this: a store or metadata of the wrong shape (a
    ``games`` list holding ``None``) becomes a LogError naming the log and the sample."""
    try:
        yield
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise LogError(
            f"{log.location}: sample {sample.id} (epoch {sample.epoch}) is not what a "
            f"{task_name(log)} log holds: {type(exc).__name__}: {exc}"
        ) from None


def counted_samples(log: EvalLog) -> list[EvalSample]:
    """The samples every count is over.

    Of a finished run, all: a sample that failed is a result (recorded as failed). Of a run
    that was cancelled, errored or is still being written, only the scored ones and the
    ones that errored: the others were stopped by the run's end, not by the model, and
    counting them as failures made a run stopped at once look like a model that solves
    nothing; but a sample that raised (a scorer choking on the model's output) is a
    failure, and leaving it out would let such output leave the denominator.
    """
    samples = log.samples or []
    if log.status == "success":
        return list(samples)
    return [s for s in samples if sample_score(s) is not None or s.error is not None]
