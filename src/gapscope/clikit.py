"""What every gapscope command shares: running one Inspect task and failing clearly."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Any, NoReturn

import typer
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from rich.console import Console
from rich.markup import escape

_err = Console(stderr=True)


def fail(message: object, code: int = 2) -> NoReturn:
    """Print ``error: message`` on stderr and exit with ``code`` (2: bad input, 1: failed run)."""
    # The message is plain text: escaped, so that "gapscope[ray]" is not read as markup.
    _err.print(f"[red]error:[/red] {escape(str(message))}", markup=True, highlight=False)
    raise typer.Exit(code)


def run_task(task: Task, model: str, log_dir: Path, **eval_args: Any) -> EvalLog:
    """Run one task; Inspect's progress display goes to stderr, so stdout carries only results."""
    with contextlib.redirect_stdout(sys.stderr):
        return inspect_eval(task, model=model, log_dir=str(log_dir), **eval_args)[0]


def require_success(log: EvalLog) -> None:
    """Exit 1, naming the log, when the run did not finish successfully."""
    if log.status != "success":
        reason = log.error.message if log.error else "no error recorded"
        fail(f"run {log.status}: {reason} (log: {log.location})", code=1)
