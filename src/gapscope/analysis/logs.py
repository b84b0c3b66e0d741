"""The one Inspect-log reader: every diagnostic's results come in through here.

A user hands a report command whatever is lying in a logs folder: a file from another
diagnostic, a half-written or corrupt ``.eval``, a directory. Each of those ends in a
:class:`LogError` naming the file and what was expected, never in a traceback from the zip or
JSON layer underneath (Inspect reports a corrupt ``.eval`` as ``ValueError: EOCD not found``).
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
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
    unanswered: Unanswered = field(default_factory=lambda: Unanswered({}))
    """Samples the model never answered (cancelled, the endpoint gone, never started)."""
    expected: int = 0
    """Samples the run was to have (dataset samples x epochs)."""

    @property
    def answered(self) -> int:
        """Samples every count is over."""
        return max(self.expected - self.unanswered.count, 0)

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
            f"{self.location}: the run did not finish (status {self.status}); rerun the same "
            "command to finish it"
        )

    def unanswered_note(self, unit: str = "samples") -> str | None:
        """What every table of this log must say of its unanswered samples (None: none)."""
        if not self.unanswered.count:
            return None
        return f"{self.location}: {self.unanswered.text(unit)}, not scored" + (
            f" (first error: {self.unanswered.first})" if self.unanswered.first else ""
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
        unanswered=unanswered(log),
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
    """The samples every count is over: those the model answered.

    A sample that raised for a reason of the model's making (a scorer choking on its output)
    is answered and counts as failed: leaving it out would let such output leave the
    denominator. One stopped by something outside the model (:func:`unanswered_cause`) is
    not, and neither is one a run that did not finish never completed: counting those as
    failures made a run stopped at once look like a model that solves nothing.
    """
    samples = log.samples or []
    return [s for s in samples if unanswered_cause(s) is None and _completed(log, s)]


def _completed(log: EvalLog, sample: EvalSample) -> bool:
    return log.status == "success" or sample_score(sample) is not None or sample.error is not None


CUT_OFF = "cut off from the endpoint (connection error)"
OUTSIDE_THE_MODEL: tuple[tuple[str, str], ...] = (
    ("CancelledError", "cancelled"),
    ("KeyboardInterrupt", "cancelled"),
    ("APIConnectionError", CUT_OFF),
    ("ConnectError", CUT_OFF),
    ("RemoteProtocolError", CUT_OFF),
    ("ConnectionError", CUT_OFF),
    ("APITimeoutError", "timed out at the endpoint"),
    ("ReadTimeout", "timed out at the endpoint"),
    ("InternalServerError", "refused by the endpoint (server error)"),
    ("RateLimitError", "refused by the endpoint (rate limit)"),
    ("LeanUnavailable", "not checked (no Lean backend)"),
    ("SelfTestRequired", "not checked (no Lean backend)"),
    ("PoolError", "not checked (the Lean pool failed)"),
    ("SandboxError", "not run (the sandbox could not start)"),
)
"""Error types that stop a sample for a reason outside the model, and the cause a table
names. Matched against the error's type and what it wraps (Inspect records a request that
failed every retry as ``RetryError(<Future ... raised APIConnectionError>)``)."""
HARNESS_LIMITS = {
    "time": "past the harness's time limit",
    "working": "past the harness's time limit",
}
"""Inspect sample limits that are the harness's, not the model's (``operator``: a person
stopped it): a sample cut by one was not answered."""
NOT_STARTED = "not started"


def unanswered_cause(sample: EvalSample) -> str | None:
    """Why the model never answered ``sample`` (None: it answered, maybe wrongly)."""
    if sample.limit is not None and sample.limit.type in (*HARNESS_LIMITS, "operator"):
        return HARNESS_LIMITS.get(sample.limit.type, "stopped by the operator")
    return None if sample.error is None else error_cause(sample.error.message)


def error_cause(message: str) -> str | None:
    """The cause outside the model of a sample's error message (Inspect's ``Type(args)``),
    or None for an error of the model's making."""
    head = message.split("(", 1)[0].strip()
    wrapped = message.split(" raised ", 1)[-1] if " raised " in message else ""
    for name, cause in OUTSIDE_THE_MODEL:
        if head.endswith(name) or wrapped.startswith(name):
            return cause
    return None


@dataclass(frozen=True)
class Unanswered:
    """The samples of one log the model never answered, counted by cause."""

    causes: dict[str, int]
    first: str = ""
    """The first line of the first such sample's error (what a user searches for)."""

    @property
    def count(self) -> int:
        return sum(self.causes.values())

    def text(self, unit: str = "samples") -> str:
        """``16 rollouts cancelled``; several causes, most first, joined by commas."""
        return ", ".join(f"{n} {unit} {cause}" for cause, n in self.causes.items())

    def short(self) -> str:
        """The causes alone, for a table cell: ``cancelled``, ``cancelled, not started``."""
        return ", ".join(self.causes)


def unanswered(log: EvalLog) -> Unanswered:
    """The samples of ``log`` the model never answered: stopped by a cause outside it, or
    (a run that did not finish) never completed or never started."""
    samples = log.samples or []
    causes: Counter[str] = Counter()
    first = ""
    for sample in samples:
        cause = unanswered_cause(sample)
        if cause is None and not _completed(log, sample):
            cause = NOT_STARTED if sample.error is None else None
        if cause is None:
            continue
        causes[cause] += 1
        if not first and sample.error is not None:
            first = sample.error.message.splitlines()[0][:200]
    expected = (log.eval.dataset.samples or 0) * (log.eval.config.epochs or 1)
    if log.status != "success" and expected > len(samples):
        causes[NOT_STARTED] += expected - len(samples)
    return Unanswered(dict(causes.most_common()), first)
