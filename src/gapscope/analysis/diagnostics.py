"""Which diagnostic a log belongs to, and its typed summary, found from the Inspect task name.

Report and compare take logs of any diagnostic; this table is how they find the reader. To
add a diagnostic, write its ``analysis/<name>.py`` with a summary
that has ``rows() -> list[GapRow]`` and ``outcomes() -> {metric: {item: bool}}``, its view in
:mod:`.view`, and add one :class:`Diagnostic` to :data:`DIAGNOSTICS` (figures, if any, go to
:mod:`.figures`). :func:`present` is the one path from a finished log to what ``run X``
prints and emits.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from gapscope.analysis import ladder, ladder_code, ladder_review, onng, prove, s2b, t2
from gapscope.analysis.logs import (
    LogError,
    RunInfo,
    expand_log_paths,
    log_path,
    read_log,
    run_info,
    task_name,
)
from gapscope.analysis.profile import GapRow
from gapscope.analysis.view import (
    View,
    ViewOptions,
    ladder_view,
    onng_view,
    prove_view,
    s2b_view,
    t2_view,
)
from gapscope.ladder import contract as ladder_log
from gapscope.onng import contract as onng_log
from gapscope.prove import contract as prove_log
from gapscope.s2b import contract as s2b_log
from gapscope.t2 import contract as t2_log

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog


class Summary(Protocol):
    """What every diagnostic's per-log summary offers."""

    def rows(self) -> list[GapRow]: ...

    def outcomes(self) -> dict[str, dict[str, bool]]: ...


@dataclass(frozen=True)
class Diagnostic:
    """A diagnostic as the analysis layer knows it."""

    task: str
    name: str
    summarize: Callable[[EvalLog], Summary]
    view: Callable[[Any, ViewOptions], View]
    """What ``run X`` shows of one summary (rows, ``--json`` details, tables)."""


def _onng(log: EvalLog) -> Summary:
    return onng.summarize(onng.records_from_log(log))


def _prove(log: EvalLog) -> Summary:
    return prove.summarize(prove.read_run(log))


DIAGNOSTICS: dict[str, Diagnostic] = {
    d.task: d
    for d in (
        Diagnostic(s2b_log.TASK, s2b.DIAGNOSTIC, s2b.summarize, s2b_view),
        Diagnostic(
            ladder_log.TASK, ladder.DIAGNOSTIC, ladder.model_run, lambda s, o: ladder_view([s], o)
        ),
        Diagnostic(
            ladder_log.REVIEW_TASK,
            ladder_review.DIAGNOSTIC,
            ladder_review.summarize,
            lambda s, o: ladder_review.review_view([s], o),
        ),
        Diagnostic(
            ladder_log.CODE_TASK,
            ladder_code.DIAGNOSTIC,
            ladder_code.summarize,
            ladder_code.code_view,
        ),
        Diagnostic(onng_log.TASK, onng.DIAGNOSTIC, _onng, onng_view),
        Diagnostic(prove_log.TASK, prove.DIAGNOSTIC, _prove, lambda s, o: prove_view([s], o)),
        Diagnostic(t2_log.TASK, t2.DIAGNOSTIC, t2.summarize_log, t2_view),
    )
}


@dataclass(frozen=True)
class LoadedLog:
    """One log, its diagnostic, its summary and (when read from a file) its run's settings."""

    path: Path
    diagnostic: Diagnostic
    summary: Summary
    info: RunInfo | None = None

    def rows(self) -> list[GapRow]:
        """The summary's rows, each marked with the run's status."""
        return self.marked(self.summary.rows())

    def marked(self, rows: Iterable[GapRow]) -> list[GapRow]:
        """``rows`` of this log, each marked with the run's status."""
        status = self.info.status if self.info else "success"
        return [replace(row, status=status) for row in rows]

    def notes(self) -> list[str]:
        """What a table of this log must say (a run that did not finish)."""
        note = self.info.note() if self.info else None
        return [note] if note else []


def load(path: Path) -> LoadedLog:
    """Read ``path`` and summarise it with its diagnostic's reader."""
    return loaded_from(read_log(path), path)


def loaded_from(log: EvalLog, path: Path | None = None) -> LoadedLog:
    """Summarise a log already in memory (a run that just ended) with its diagnostic's reader."""
    path = path or log_path(log.location)
    diagnostic = DIAGNOSTICS.get(task_name(log))
    if diagnostic is None:
        known = ", ".join(sorted(DIAGNOSTICS))
        raise LogError(f"{path}: task {task_name(log)!r} is not a gapscope diagnostic ({known})")
    try:
        summary = diagnostic.summarize(log)
    except (KeyError, ValueError, TypeError) as exc:
        raise LogError(f"{path}: not a well-formed {diagnostic.name} log ({exc!r})") from None
    return LoadedLog(path, diagnostic, summary, run_info(log))


def summaries_of(logs: Iterable[LoadedLog], task: str) -> list[Any]:
    """The summaries of the logs of one task (its reader's type: the caller names it)."""
    return [x.summary for x in logs if x.diagnostic.task == task]


def present(log: EvalLog, options: ViewOptions = ViewOptions()) -> View:
    """What ``run X`` prints and emits for the log it just finished (any diagnostic)."""
    loaded = loaded_from(log)
    view = loaded.diagnostic.view(loaded.summary, options)
    notes = dict.fromkeys([*view.notes, *loaded.notes()])  # a view may already say it
    return replace(view, rows=loaded.marked(view.rows), notes=list(notes))


@dataclass(frozen=True)
class LoadedLogs:
    """The logs a report is over, and what it must say about the ones it is not over."""

    logs: list[LoadedLog]
    notes: list[str]


def load_all(paths: Iterable[Path]) -> LoadedLogs:
    """Every log under ``paths`` (files, or directories of ``.eval`` files), less those a
    retry supersedes.

    ``inspect eval-retry`` writes a new log with the task id of the run it resumes (and the
    samples that run finished): of logs sharing a task id only the newest counts, else a
    cancelled run and its retry would be two rows of one model.
    """
    loaded = [load(p) for p in expand_log_paths(paths)]
    newest: dict[str, LoadedLog] = {}
    for x in loaded:
        if x.info is None or not x.info.task_id:
            continue
        kept = newest.get(x.info.task_id)
        if kept is None or (kept.info is not None and kept.info.created_at < x.info.created_at):
            newest[x.info.task_id] = x
    current = [x for x in loaded if x.info is None or newest.get(x.info.task_id, x) is x]
    notes = [
        f"{x.path} ({x.info.status}) is superseded by its retry {newest[x.info.task_id].path}"
        for x in loaded
        if x.info is not None and newest.get(x.info.task_id, x) is not x
    ]
    return LoadedLogs(current, notes + [n for x in current for n in x.notes()])


def load_standing(paths: Iterable[Path]) -> LoadedLogs:
    """The newest logs of a study as they stand now (``gapscope profile``), unfinished ones
    included: an unfinished log is reported on what it scored, and one whose reader finds
    nothing to report yet is left out with a note instead of failing the whole study."""
    logs: list[LoadedLog] = []
    notes: list[str] = []
    for path in paths:
        try:
            logs.append(load(path))
        except LogError as exc:
            info = run_info(read_log(path))
            if info.finished:
                raise
            notes.append(f"{path} (status {info.status}): nothing to report yet: {exc}")
    return LoadedLogs(logs, notes + [n for x in logs for n in x.notes()])
