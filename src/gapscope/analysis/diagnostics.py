"""Which diagnostic a log belongs to, and its typed summary, found from the Inspect task name.

Report and compare take logs of any diagnostic; the readers come from the diagnostic table
(:mod:`.table`: the built-ins and the installed ``gapscope.diagnostics`` entry points). To add
a diagnostic, see docs/extending.md. :func:`present` is the one path from a finished log to
what ``run X`` prints and emits.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from gapscope.analysis.logs import (
    LogError,
    expand_log_paths,
    log_path,
    read_log,
    run_info,
    task_name,
)
from gapscope.analysis.spec import LoadedLog, LogReader, Summary, summaries_of
from gapscope.analysis.table import known_tasks, load_problems, reader
from gapscope.analysis.view import View, ViewOptions

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog

__all__ = [
    "LoadedLog",
    "LoadedLogs",
    "LogReader",
    "Summary",
    "load",
    "load_all",
    "load_standing",
    "loaded_from",
    "present",
    "summaries_of",
]


def load(path: Path) -> LoadedLog:
    """Read ``path`` and summarize it with its diagnostic's reader."""
    return loaded_from(read_log(path), path)


def loaded_from(log: EvalLog, path: Path | None = None) -> LoadedLog:
    """Summarise a log already in memory (a run that just ended) with its diagnostic's reader."""
    path = path or log_path(log.location)
    diagnostic = reader(task_name(log))
    if diagnostic is None:
        known = ", ".join(known_tasks())
        problems = "".join(f"; {p}" for p in load_problems())
        raise LogError(
            f"{path}: task {task_name(log)!r} is not a gapscope diagnostic ({known}){problems}"
        )
    try:
        summary = diagnostic.summarize(log)
    except (KeyError, ValueError, TypeError) as exc:
        raise LogError(f"{path}: not a well-formed {diagnostic.name} log ({exc!r})") from None
    return LoadedLog(path, diagnostic, summary, run_info(log))


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
    problems = list(load_problems())  # an installed diagnostic that did not load is said
    return LoadedLogs(current, problems + notes + [n for x in current for n in x.notes()])


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
