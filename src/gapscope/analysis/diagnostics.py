"""Which diagnostic a log belongs to, and its typed summary, found from the Inspect task name.

Report and compare take logs of any diagnostic; this table is how they find the reader. To
add a diagnostic, write its ``analysis/<name>.py`` with a summary
that has ``rows() -> list[GapRow]`` and ``outcomes() -> {metric: {item: bool}}`` and add one
:class:`Diagnostic` to :data:`DIAGNOSTICS` (figures, if any, go to :mod:`.figures`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from gapscope.analysis import ladder, onng, prove, s2b, t2
from gapscope.analysis.logs import (
    LogError,
    RunInfo,
    expand_log_paths,
    read_log,
    run_info,
    task_name,
)
from gapscope.analysis.profile import GapRow

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


def _onng(log: EvalLog) -> Summary:
    return onng.summarize(onng.records_from_log(log))


def _prove(log: EvalLog) -> Summary:
    return prove.summarize(prove.read_run(log))


DIAGNOSTICS: dict[str, Diagnostic] = {
    d.task: d
    for d in (
        Diagnostic(s2b.TASK, s2b.DIAGNOSTIC, s2b.summarize),
        Diagnostic(ladder.TASK, ladder.DIAGNOSTIC, ladder.model_run),
        Diagnostic(onng.TASK, onng.DIAGNOSTIC, _onng),
        Diagnostic(prove.TASK, prove.DIAGNOSTIC, _prove),
        Diagnostic(t2.TASK, t2.DIAGNOSTIC, t2.summarize_log),
    )
}


@dataclass(frozen=True)
class LoadedLog:
    """One log, its diagnostic, its summary and (when read from a file) its run's settings."""

    path: Path
    diagnostic: Diagnostic
    summary: Summary
    info: RunInfo | None = None


def load(path: Path) -> LoadedLog:
    """Read ``path`` and summarise it with its diagnostic's reader."""
    return loaded_from(read_log(path), path)


def loaded_from(log: EvalLog, path: Path | None = None) -> LoadedLog:
    """Summarise a log already in memory (a run that just ended) with its diagnostic's reader."""
    path = path or Path(log.location.removeprefix("file://"))
    diagnostic = DIAGNOSTICS.get(task_name(log))
    if diagnostic is None:
        known = ", ".join(sorted(DIAGNOSTICS))
        raise LogError(f"{path}: task {task_name(log)!r} is not a gapscope diagnostic ({known})")
    try:
        summary = diagnostic.summarize(log)
    except (KeyError, ValueError, TypeError) as exc:
        raise LogError(f"{path}: not a well-formed {diagnostic.name} log ({exc!r})") from None
    return LoadedLog(path, diagnostic, summary, run_info(log))


def load_all(paths: Iterable[Path]) -> list[LoadedLog]:
    """Every log under ``paths`` (files, or directories of ``.eval`` files)."""
    return [load(p) for p in expand_log_paths(paths)]
