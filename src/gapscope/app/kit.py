"""What every gapscope command shares: one output envelope, exit codes, and the run skeleton.

Exit codes, decided by the status of the log a run wrote (not by what Inspect returned): 0
it finished, 1 it did not (an error; the message says what rerunning the same command
resumes), 2 bad input, 130 interrupted (Ctrl-C, or a log left cancelled; rerunning the same
command resumes it, as does ``inspect eval-retry LOG``).

How a command adopts it (a new ``run X`` or ``X report``)::

    def run_x(..., json_out: JsonOut = False) -> None:
        run_diagnostic(
            "run x",
            json_out,
            lambda: x_task(...),  # raise ValueError & co. for bad input
            model=model,      # the finished log is shown by analysis.diagnostics.present
            log_dir=log_dir,
            bad_input=(ValueError, SourceError),
        )

    def x_report(logs, json_out) -> None:
        with command_output("x report", json_out) as out:
            summary = read_or_fail(out, lambda: x.read(...))  # LogError: exit 2, no traceback
            out.logs.extend(str(p) for p in logs)
            out.finish(x_view(summary))  # from analysis.view, as the run shows it

A new diagnostic's reader goes in ``gapscope/analysis/<x>.py`` (through
``analysis.logs.read_log``; see ``analysis/diagnostics.py``), its view in
``analysis/view.py``, its printer beside its reader in ``analysis/<x>_tables.py``. Bad input
raised inside ``build`` (``typer.BadParameter`` or one of ``bad_input``) and a ``--model`` the
provider cannot open become exit 2 with the envelope.

With ``--json`` everything a command or Inspect prints goes to stderr while the command runs,
and stdout gets exactly one JSON object: ``{"command", "status", "logs", "summary": [gap-profile
rows], "details", "notes", "error"}``, also on failure (``notes``: what the reader must know,
e.g. a run that did not finish). Inspect is imported only when a run starts, so
``gapscope --help`` stays fast.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar

import typer
from rich.text import Text

from gapscope.analysis import LiteralConsole, View, ViewOptions, printable
from gapscope.app.endings import EXIT_BAD_INPUT as EXIT_BAD_INPUT  # re-exported: every command's
from gapscope.app.endings import EXIT_INTERRUPTED as EXIT_INTERRUPTED
from gapscope.app.endings import EXIT_OK as EXIT_OK
from gapscope.app.endings import EXIT_RUN_FAILED as EXIT_RUN_FAILED
from gapscope.app.endings import TaskEnd, read_end
from gapscope.app.options import GENERATION as GENERATION  # re-exported: set by run options
from gapscope.app.options import generation_limits

if TYPE_CHECKING:
    from inspect_ai import Task
    from inspect_ai.log import EvalLog
    from inspect_ai.model import Model

    from gapscope.app.preflight import Rate

JsonOut = Annotated[bool, typer.Option("--json", help="Envelope as JSON on stdout.")]
"""The ``--json`` flag of every command (see the module docstring for the envelope)."""

EMBEDDED_MODEL = "gapscope/embedded"
"""The default ``--model`` of every run command: works offline, out of the box."""

STATUS = {
    EXIT_OK: "ok",
    EXIT_RUN_FAILED: "run_failed",
    EXIT_BAD_INPUT: "bad_input",
    EXIT_INTERRUPTED: "interrupted",
}
T = TypeVar("T")

err_console = LiteralConsole(stderr=True, soft_wrap=True)  # paths in messages stay whole


WIDTH_ENV = "GAPSCOPE_WIDTH"
"""Width of printed tables, when ``gapscope --width N`` does not give one."""
TABLE_WIDTH: ContextVar[int | None] = ContextVar("table_width", default=None)
"""``gapscope --width N``: set by the root command for every invocation (None when not given)."""
PIPED_WIDTH = 1000
"""Tables written to a pipe or a file are not cut to a terminal's width (rich's default of 80
columns turned names into ``gapsc…``): they take the width their cells need, up to this."""


def table_console(file: IO[str]) -> LiteralConsole:
    """A console for result tables on ``file``: ``--width`` if given, the terminal's width on a
    terminal, and room for every cell when piped."""
    width = TABLE_WIDTH.get() or os.environ.get(WIDTH_ENV)
    if width:
        return LiteralConsole(file=file, width=int(width))
    return LiteralConsole(file=file, width=None if file.isatty() else PIPED_WIDTH)


@dataclass
class Output:
    """One command's output channel: terminal tables, or one JSON envelope on stdout."""

    command: str
    json_mode: bool
    stdout: IO[str] = field(default_factory=lambda: sys.stdout)
    logs: list[str] = field(default_factory=list)

    def _envelope(self, code: int, result: View, error: str | None) -> str:
        return json.dumps(
            {
                "command": self.command,
                "status": STATUS[code],
                "logs": self.logs,
                "summary": [row.to_dict() for row in result.rows],
                "details": result.details,
                "notes": list(result.notes),
                "error": error,
            },
            indent=2,
        )

    def finish(self, result: View, code: int = EXIT_OK, error: str | None = None) -> None:
        """Print the result (table or envelope); exit with ``code`` when it is not 0."""
        if self.json_mode:
            self.stdout.write(self._envelope(code, result, error) + "\n")
            self.stdout.flush()
        elif result.show is not None or result.notes:
            console = table_console(self.stdout)
            if result.show is not None:
                result.show(console)
            for note in result.notes:
                console.print(f"note: {note}", markup=False, highlight=False)
        if error:
            _print_error(error)
        if code != EXIT_OK:
            raise typer.Exit(code)

    def fail(self, message: object, code: int = EXIT_BAD_INPUT, details: Any = None) -> NoReturn:
        """Exit with ``code`` and ``error: message`` on stderr (and in the envelope)."""
        self.finish(View(details=details), code, str(message))
        raise AssertionError("unreachable")  # finish() always exits for a non-zero code


@contextlib.contextmanager
def command_output(command: str, json_mode: bool) -> Iterator[Output]:
    """Run a command body; with ``json_mode`` anything printed on stdout goes to stderr.

    A ``typer.BadParameter`` raised in the body is bad input: exit 2 with the envelope; so is
    an ``OSError`` (a full disk, a path it may not write), named by its file when it has one.
    """
    out = Output(command, json_mode)
    redirect = contextlib.redirect_stdout(sys.stderr) if json_mode else contextlib.nullcontext()
    with redirect:
        try:
            yield out
        except typer.BadParameter as exc:
            out.fail(exc.format_message())
        except OSError as exc:
            reason = exc.strerror or str(exc)
            out.fail(f"{exc.filename}: {reason}" if exc.filename else reason)


def write_output(path: Path, text: str, option: str = "--out") -> None:
    """Write a command's output file; what the system refuses (no space left, no permission)
    is bad input naming ``option`` and the file, not a traceback."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise typer.BadParameter(
            f"{path}: cannot write it: {exc.strerror or exc}", param_hint=option
        ) from None


def fail(message: object, code: int = EXIT_BAD_INPUT) -> NoReturn:
    """Print ``error: message`` on stderr and exit with ``code`` (for commands without --json)."""
    _print_error(str(message))
    raise typer.Exit(code)


def _print_error(message: str) -> None:
    # literal: "gapscope[ray]" or a model named "[/bold]x" is not rich markup
    err_console.print(Text.assemble(("error:", "red"), " ", printable(message)), highlight=False)


def require_directory(path: Path, option: str) -> None:
    """Refuse a directory option that names a file, or sits below one (it could not be created)."""
    for candidate in (path, *path.parents):
        if candidate.exists():
            if not candidate.is_dir():
                where = "" if candidate == path else f" (its parent {candidate} is a file)"
                raise typer.BadParameter(f"{path} is not a directory{where}", param_hint=option)
            return


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)  # also a hard link, or a path through a symlink
    except OSError:  # one of them does not exist (yet): compare what they would name
        return a.resolve() == b.resolve()


def refuse_overwriting(out: Path | None, option: str, inputs: Iterable[tuple[str, Path]]) -> None:
    """Refuse an output that is one of the command's inputs (``(what, path)`` pairs): opening
    it for writing truncates the input before it is read, or overwrites a run's own log."""
    if out is None:
        return
    for what, path in inputs:
        if _same_file(out, path):
            raise typer.BadParameter(
                f"{out} is also the input {what} {path}; writing it would destroy that input,"
                " give another path",
                param_hint=option,
            )


def read_or_fail(out: Output, read: Callable[[], T]) -> T:
    """Run a log-reading step; an unreadable or wrong-kind log is bad input (exit 2)."""
    from gapscope.analysis import ComparisonError, LogError

    try:
        return read()
    except (LogError, ComparisonError) as exc:
        out.fail(exc)


class Interrupted(Exception):
    """The user stopped a run; ``location`` is its (resumable) log, when one was written;
    ``resumes`` whether rerunning the same command continues it (:func:`run_task`'s
    ``resume``)."""

    def __init__(self, location: str | None, resumes: bool = False) -> None:
        super().__init__(location)
        self.location = location
        self.resumes = resumes


def interrupted(out: Output, stop: Interrupted) -> NoReturn:
    """Exit 130, naming the log and what resumes it."""
    if stop.location is None:
        out.fail("interrupted before any log", EXIT_INTERRUPTED, details={"resume": None})
    out.logs.append(stop.location)
    retry = f"inspect eval-retry {stop.location}"
    scored = end.scored if (end := _end_on_disk(stop.location)) else 0
    how = (
        f"rerun the same command to resume it (its {scored} scored samples are kept), or {retry}"
        if stop.resumes
        else f"resume it with {retry} (its {scored} scored samples are kept)"
    )
    out.fail(
        f"interrupted: {stop.location} did not finish; {how}",
        EXIT_INTERRUPTED,
        details={"resume": retry},
    )


def _end_on_disk(location: str) -> TaskEnd | None:
    """How the log at ``location`` says its run ended (None: no readable log there yet, e.g.
    one cut off before its header was written)."""
    from gapscope.analysis import log_path

    try:
        return read_end(log_path(location))
    except Exception:  # a zip or JSON error of a half-written log
        return None


def _logs_in(log_dir: Path) -> set[Path]:
    return set(log_dir.glob("*.eval")) if log_dir.is_dir() else set()


RESUME_KEY = "gapscope_run"
"""Eval metadata: the fingerprint of the task and model that wrote a log (:func:`run_key`).
A rerun of the same command finds its unfinished log by it and resumes it."""


def run_key(task: Task, model: str) -> str:
    """What makes two runs the same run: the task's name, its recorded settings (metadata),
    generation config, epochs, sample ids, and the model. Built before anything is spent."""
    import hashlib

    epochs = getattr(task.epochs, "epochs", task.epochs)
    ids = [str(sample.id) for sample in task.dataset]
    text = json.dumps(
        [task.name, model, task.metadata, task.config.model_dump(exclude_none=True), epochs, ids],
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def _unfinished_run(log_dir: Path, key: str) -> Path | None:
    """The newest log in ``log_dir`` written by the command ``key``, when it did not finish."""
    from inspect_ai.log import read_eval_log

    newest: tuple[str, Path, str] | None = None
    for path in _logs_in(log_dir):
        try:
            header = read_eval_log(str(path), header_only=True)
        except Exception:  # not a readable log: not one to resume
            continue
        if (header.eval.metadata or {}).get(RESUME_KEY) != key:
            continue
        if newest is None or newest[0] < header.eval.created:
            newest = (header.eval.created, path, header.status)
    return newest[1] if newest is not None and newest[2] != "success" else None


class ResumeFailed(Exception):
    """A resumed run (``inspect eval-retry``) failed after it had started its log: starting
    over then would leave two logs and ask its scored samples again, so the run ends
    unfinished instead; ``location`` is the log the retry was writing (None: it left none
    but the one it resumed, ``previous``)."""

    def __init__(self, previous: Path, location: str | None, cause: Exception) -> None:
        super().__init__(_plain(str(cause)))
        self.previous = previous
        self.location = location


def _resumed(previous: Path, log_dir: Path, eval_args: dict[str, Any]) -> list[EvalLog]:
    """Continue ``previous`` (``inspect eval-retry``); [] when Inspect cannot rebuild its task
    from the log (a task not in Inspect's registry), which fails before any log is written:
    then the run starts over, and says so. A failure after the retry wrote or touched a log
    raises :class:`ResumeFailed`."""
    from inspect_ai import eval_retry

    before = {path: path.stat().st_mtime_ns for path in _logs_in(log_dir)}
    try:
        return eval_retry(str(previous), log_dir=str(log_dir), **eval_args)
    except Exception as exc:
        after = {path: path.stat().st_mtime_ns for path in _logs_in(log_dir)}
        if after != before:  # the retry had begun its log: a run failure, not a rebuild one
            new = sorted(set(after) - set(before), key=lambda p: after[p])
            raise ResumeFailed(previous, str(new[-1]) if new else None, exc) from exc
        err_console.print(
            f"note: cannot resume {previous} ({_plain(str(exc))}); starting the run over",
            markup=False,
            highlight=False,
        )
        return []


def run_task(
    task: Task, model: str | Model, log_dir: Path, resume: str | None = None, **eval_args: Any
) -> EvalLog:
    """Run one task (:func:`run_tasks` with one task)."""
    return run_tasks([task], model, log_dir, resume, **eval_args)[0]


def run_tasks(
    tasks: list[Task],
    model: str | Model,
    log_dir: Path,
    resume: str | None = None,
    **eval_args: Any,
) -> list[EvalLog]:
    """Run ``tasks`` side by side in one Inspect eval (all at once, sharing the model: an
    in-process engine batches their requests together); their logs, in task order.
    Inspect's progress display goes to stderr, so stdout carries only results.

    With ``resume`` (:func:`run_key`), the log records it, and when the newest log of
    that command in ``log_dir`` did not finish, this run resumes it (``inspect eval-retry``:
    its scored samples are kept) instead of starting over.

    Raises Interrupted after Ctrl-C: Inspect then returns no log (or a cancelled one: the
    log's status on disk is read, not only the one returned), and the log it was writing is
    the newest ``.eval`` that appeared in ``log_dir`` during the run.
    """
    from inspect_ai import eval as inspect_eval

    if resume and len(tasks) != 1:
        raise ValueError("resume names one command's run: give it one task")
    shown = [str(log_dir), str(getattr(model, "name", model))]
    if "display" not in eval_args and any("[" in t or printable(t) != t for t in shown):
        # Inspect's panels (even with display "none") read the log dir and model name as rich
        # markup: a "[/x]" in either ends the run in a MarkupError. Its log display does not.
        err_console.print(
            "note: Inspect shows this run as log lines, not panels: they would read the"
            f" brackets or control characters of {' or '.join(printable(t) for t in shown)}"
            " as markup",
            highlight=False,
        )
        eval_args["display"] = "log"
    previous = _unfinished_run(log_dir, resume) if resume else None
    if previous is not None:
        err_console.print(
            f"resuming {previous} (it did not finish; its scored samples are kept)",
            markup=False,
            highlight=False,
        )
    before = _logs_in(log_dir)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            logs = _resumed(previous, log_dir, eval_args) if previous is not None else []
            if not logs:
                metadata = {RESUME_KEY: resume} if resume else None
                eval_args.setdefault("max_tasks", len(tasks))
                logs = inspect_eval(
                    tasks, model=model, log_dir=str(log_dir), metadata=metadata, **eval_args
                )
    except KeyboardInterrupt:
        logs = []
    for log in logs:
        on_disk = _end_on_disk(log.location)
        if "cancelled" in (log.status, on_disk and on_disk.status):
            raise Interrupted(log.location, resumes=resume is not None)
    if logs:
        return logs
    new = sorted(_logs_in(log_dir) - before, key=lambda p: p.stat().st_mtime)
    raise Interrupted(str(new[-1]) if new else None, resumes=resume is not None)


def _plain(message: str) -> str:
    """Inspect's provider errors carry rich markup ("[bold]VLLM_API_KEY[/bold]"): strip it."""
    from rich.errors import MarkupError
    from rich.text import Text

    try:
        return Text.from_markup(message).plain
    except MarkupError:
        return message


class ModelOpenError(ValueError):
    """The provider could not open the ``--model`` given."""


def open_model(model: str) -> str | Model:
    """The model, opened before the run so a bad ``--model`` is bad input, not a traceback.

    Whatever fails while a provider opens a model (a missing checkpoint, a missing package, a
    malformed name) is the user's ``--model`` argument; the message names it. ``none`` (no
    model, for the reference listeners) is passed through. A model served over HTTP gets a
    client whose replies are capped and checked (``models.endpoint``).
    """
    from inspect_ai.model import get_model

    from gapscope.models import describe_missing_settings, guarded_model_args

    if model == "none":
        return model
    try:
        with contextlib.redirect_stdout(sys.stderr):
            return get_model(model, **guarded_model_args(model))
    except Exception as exc:  # any provider error: the message is what the user needs
        # a served model's unset base URL or key: every one of them named, with what it holds
        said = describe_missing_settings(model) or f"cannot open it: {_plain(str(exc))}"
        raise ModelOpenError(f"--model {model}: {said}") from None


def announce_plan(task: Task, model: str, diagnostic: str, rate: Rate | None = None) -> None:
    """Say on stderr what the run will spend (as ``gapscope profile --dry-run`` does) and how
    long it may take at ``rate`` (the preflight's measurement; for gapscope's own engine on a
    CPU an assumed rate), with a warning past ``preflight.WALL_WARNING_S``."""
    from gapscope.app.preflight import assumed_rate, estimate_lines
    from gapscope.app.study import plan_of

    row = plan_of(task, model, diagnostic, diagnostic)
    if row.generations == 0:
        return
    lean = f", {row.lean_checks:,} Lean checks" if row.lean_checks else ""
    err_console.print(
        f"plan: {row.samples:,} samples, {row.generations:,} generations x up to "
        f"{row.max_tokens:,} tokens = {row.token_budget:,} output tokens at most{lean}",
        markup=False,
        highlight=False,
    )
    if rate is None and model.startswith("gapscope/"):
        rate = assumed_rate(model, _has_gpu())
    for line in estimate_lines([row], {model: rate} if rate else {}):
        err_console.print(line, markup=False, highlight=False)


def _has_gpu() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def _is_prerequisite_error(exc: BaseException) -> bool:
    """Whether Inspect raised its "install X first" error.

    Inspect does not export that type (it lives in a private module), so it is recognised by
    its class name rather than imported from ``inspect_ai._util``.
    """
    return any(cls.__name__ == "PrerequisiteError" for cls in type(exc).__mro__)


def run_diagnostic(
    command: str,
    json_out: bool,
    build: Callable[[], Task],
    summarize: Callable[[EvalLog], View] | None = None,
    *,
    model: str,
    view_options: ViewOptions = ViewOptions(),
    log_dir: Path,
    bad_input: tuple[type[BaseException], ...] = (ValueError,),
    **eval_args: Any,
) -> None:
    """The ``run`` skeleton: build the task (bad input: exit 2), run it (Ctrl-C: exit 130 with
    the resume line), summarize the log, print or emit JSON, exit 1 if the run failed.

    A diagnostic's log is summarized by its reader in the analysis registry
    (:func:`gapscope.analysis.diagnostics.present`, shown with ``view_options``); ``summarize``
    replaces that for a task that is not a diagnostic (teacher compilation).
    """
    if summarize is None:
        from gapscope.analysis import present

        def summarize(log: EvalLog) -> View:
            return present(log, view_options)

    with command_output(command, json_out) as out:
        _run_diagnostic(out, build, summarize, model, log_dir, bad_input, eval_args)


def _run_diagnostic(
    out: Output,
    build: Callable[[], Task],
    summarize: Callable[[EvalLog], View],
    model: str,
    log_dir: Path,
    bad_input: tuple[type[BaseException], ...],
    eval_args: dict[str, Any],
) -> None:
    require_directory(log_dir, "--log-dir")
    try:
        task = build()
        opened = open_model(model)
    except typer.BadParameter as exc:  # raised while building: still one envelope in --json
        out.fail(exc.format_message())
    except ModelOpenError as exc:
        out.fail(exc)
    except bad_input as exc:
        out.fail(exc)
    from gapscope.app.preflight import PREFLIGHT_TIMEOUT_S, check_endpoints, request_bounds
    from gapscope.app.study import plan_of
    from gapscope.models import EndpointError

    given = GENERATION.get() or generation_limits()
    try:
        rates = check_endpoints({model: opened}, given.get("attempt_timeout", PREFLIGHT_TIMEOUT_S))
    except EndpointError as exc:  # down, wrong served name, refused key: nothing started
        out.fail(exc)
    diagnostic = out.command.removeprefix("run ")
    announce_plan(task, model, diagnostic, rates.get(model))
    row = plan_of(task, model, diagnostic, diagnostic)
    bounds = request_bounds(row, rates.get(model), given, eval_args.get("max_connections"))
    eval_args = bounds | eval_args
    try:
        with _piped_progress(task, model, diagnostic):
            log = run_task(task, opened, log_dir, resume=run_key(task, model), **eval_args)
    except Interrupted as stop:
        interrupted(out, stop)
    except ResumeFailed as failed:
        where = failed.location or str(failed.previous)
        out.logs.append(where)
        out.fail(
            f"run error: resuming {failed.previous} failed partway: {failed} (log: {where});"
            " rerun the same command to resume it (its scored samples are kept)",
            EXIT_RUN_FAILED,
            details={"resume": f"inspect eval-retry {where}"},
        )
    except Exception as exc:
        if not _is_prerequisite_error(exc):
            raise
        out.fail(exc)  # e.g. a provider's package is not installed: the user's to fix
    _finish_run(out, log, summarize)


def _finish_run(out: Output, log: EvalLog, summarize: Callable[[EvalLog], View]) -> None:
    """Show the log; its status on disk (not the one Inspect returned) decides the exit code:
    0 finished, 1 not (a cancelled one never gets here: :func:`run_task` raised Interrupted)."""
    from gapscope.analysis import log_path

    out.logs.append(log.location)
    end = read_end(log_path(log.location))
    if end.finished:
        out.finish(summarize(log))
        return
    reason = (
        run_error_text(log.error.message, log.error.traceback) if log.error else "no error recorded"
    )
    try:
        partial = summarize(log)
    except Exception:  # a failed run may lack what a summary needs; the error says enough
        partial = View()
    out.finish(
        partial,
        EXIT_RUN_FAILED,
        f"run {end.status}: {reason} ({end.scored} of {end.total} samples scored; log: "
        f"{log.location}); rerun the same command to resume it (its {end.scored} scored "
        "samples are kept)",
    )


def run_error_text(message: str, traceback: str) -> str:
    """What ended a run, on one line. When Inspect's retry loop gave up it records tenacity's
    ``RetryError(<Future ... raised X>)``, which hides the server's words; the exception it
    wrapped is then read from the last exception line of the traceback that is not the
    RetryError itself."""
    if message.startswith("RetryError("):
        raised = [
            line
            for line in traceback.splitlines()
            if line and not line[0].isspace() and ": " in line and "RetryError" not in line
        ]
        if raised:
            message = raised[-1]
    return one_line(message)


def one_line(message: str) -> str:
    """A log's error message on one line (a provider's message may carry the whole reply)."""
    from gapscope.models import excerpt

    return excerpt(message, 500)


@contextlib.contextmanager
def _piped_progress(task: Task, model: str, diagnostic: str) -> Iterator[None]:
    """A progress line every 30 s when stderr is not a terminal (Inspect's own display shows
    nothing there until the run ends)."""
    if err_console.file.isatty():
        yield
        return
    from gapscope.app.study import Study, StudyProgress, StudyTask, plan_of, tracking

    row = plan_of(task, model, diagnostic, diagnostic)
    study = Study(tasks=[StudyTask(row, task, model)])
    progress = StudyProgress(study, lambda line: err_console.print(line, markup=False))
    with tracking(progress):
        yield
