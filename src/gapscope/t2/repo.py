"""The repository track: test a generated declaration inside a real Lean project.

For records of a Lean project (T2's research track) the tests are the project itself: the
target is substituted in its file and the modules that import that file, directly or not,
are rebuilt with ``lake build``. Every worker owns a private copy of the project (build
outputs included, so only what changed is rebuilt); the user's checkout is never written to,
and the worker puts the original file back in its own copy after each sample.

Per sample: compile is ``lake env lean FILE`` of the file cut right after the generated
declaration (T2 writes ``#exit`` there; cutting the file is the same program), then the whole
file goes back and ``lake build`` builds the target's module and every module that depends on
it; :mod:`gapscope.t2.repo_verdicts` grades them. A missing tool or project is a
``server_error``.

The generated code is untrusted and ``lake`` runs it, so every ``lake`` call runs in the Lean
layer's sandbox (``gapscope.lean.sandbox``: no network, read-only filesystem, the worker's
project copy the only writable folder). Without a working bubblewrap the track refuses to start
(``Workspaces`` raises) unless ``allow_unsandboxed``. Each call is also held, with everything it
starts, to ``RepoConfig.bounds`` as a REPL or a kernel check is (``gapscope.lean.bounded``: its
own cgroup where the host offers one, else, as root, the sandbox started as an unprivileged uid
under ``RLIMIT_NPROC``, the copy handed to that uid). A call a limit stopped is settled by a
control, the original's build of the same modules under the same bounds
(:mod:`gapscope.t2.repo_control`): ``broke_check`` (a failure) when the control builds, else a
``server_error`` naming the limit; every checked sample's ``bounds`` say which limits held.

The build keeps the lines the verdicts are graded from wherever they came in its output
(:func:`gapscope.t2.repo_verdicts.decisive`), not only the tail kept for the log.
"""

from __future__ import annotations

import contextlib
import os
import queue
import shutil
import signal
import tempfile
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from gapscope.lean import (
    LAKE_CALL,
    Bounds,
    Keep,
    Run,
    RunBounds,
    decide_sandbox,
    repl_bounds,
    run_bounds,
    sandbox_choice,
    unsandboxed_allowed,
)
from gapscope.t2.evaluate import SampleOutcome, SampleResult, Screen, code_to_check
from gapscope.t2.extract import Answer
from gapscope.t2.project import ProjectIndex, dependents, module_of
from gapscope.t2.records import T2Record, project_path_problem
from gapscope.t2.repo_control import CONTROL_MARK, Controls
from gapscope.t2.repo_verdicts import decisive, verdicts
from gapscope.t2.successors import Successor, record_successors


@dataclass(frozen=True)
class RepoConfig:
    """Where the project is and how ``lake`` is run (``lake`` may be any command line).

    ``allow_unsandboxed`` lets ``lake`` run without the sandbox where bubblewrap is missing;
    ``sandbox`` as for the Lean backends (None: ``$GAPSCOPE_LEAN_SANDBOX``, else sandboxed;
    False, never, needs ``allow_unsandboxed``); ``bounds``, what one sandboxed ``lake`` call
    may use with all it starts (default: a REPL's, ``gapscope.lean.local.repl_bounds``)."""

    root: Path
    lake: tuple[str, ...] = ("lake",)
    build_timeout_s: float = 1200.0
    compile_timeout_s: float = 600.0
    workers: int = 2
    allow_unsandboxed: bool = False
    sandbox: bool | None = None
    bounds: Bounds = field(default_factory=lambda: repl_bounds(None))


def target_file(record: T2Record) -> str:
    """The file of a research-track record: its id up to the first ``.lean``.

    Raises ValueError, naming the record and field, when the id or ``dataset_name`` would
    lead outside the project (``gapscope.t2.records.project_path_problem``).
    """
    problem = project_path_problem(record)
    if problem is not None:
        raise ValueError(f"record {problem}")
    return record.id[: record.id.index(".lean") + len(".lean")]


PROJECT_MARKERS = ("lakefile.lean", "lakefile.toml", "lean-toolchain")
"""Files that make a folder a Lean project (not a source folder inside one)."""


def project_dir(root: Path, record: T2Record) -> Path:
    """``root/<dataset_name>`` when that is a Lean project (one root holding many projects),
    else ``root`` itself: a project ``Foo`` usually has a source folder ``Foo/``, which is
    not a project of its own."""
    target_file(record)  # dataset_name is checked with the id
    candidate = root / record.dataset_name
    if record.dataset_name and any((candidate / m).is_file() for m in PROJECT_MARKERS):
        return candidate
    return root


def file_in(project: Path, record: T2Record) -> Path:
    """The record's file in ``project``, refused (ValueError) when it or a folder on the way
    is a symbolic link: a write through a link in a private copy lands in the linked file,
    which may be the user's own."""
    relative = target_file(record)
    path = project
    for part in relative.split("/"):
        path = path / part
        if path.is_symlink():
            raise ValueError(
                f"record line {record.line} ({record.id}): id: {path.relative_to(project)} is a"
                " symbolic link; the repository track only writes regular files of the project"
            )
    return path


class RepoSuccessors:
    """A record's successors across its project (:class:`gapscope.t2.project.ProjectIndex`),
    each project under ``root`` read once and each record searched once: the repository
    track's count for the audit's filter, the profile and the samples' ``dependents``. For a
    record that names no file inside the project (the audit reports it invalid) they are its
    ``after_target_code``'s."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._indexes: dict[Path, ProjectIndex] = {}
        self._found: dict[T2Record, list[Successor]] = {}

    def __call__(self, record: T2Record) -> list[Successor]:
        if record not in self._found:
            try:
                project, module = project_dir(self.root, record), module_of(target_file(record))
            except ValueError:
                self._found[record] = record_successors(record)
            else:
                index = self._indexes.setdefault(project, ProjectIndex(project))
                self._found[record] = index.successors(record, module)
        return self._found[record]


def file_text_of(root: Path, record: T2Record) -> str | None:
    """The text of the record's file in the project, or None when there is none.

    Raises ValueError when the record names no file inside the project (``file_in``).
    """
    path = file_in(project_dir(root, record), record)
    return path.read_text(encoding="utf-8") if path.is_file() else None


@dataclass(eq=False)  # hashable by identity: the signal handler keeps a set of them
class Workspaces:
    """Private copies of projects, one set per worker, handed out one at a time.

    While a file of a copy holds generated code its original text is kept here, so that a
    SIGTERM or SIGHUP (whose default ends the process before any ``finally`` runs) first puts
    every such file back and kills every running ``lake``; SIGINT raises in Python, so the
    ``finally`` of ``substituted`` restores the file then.
    """

    config: RepoConfig
    _free: queue.Queue[Path] = field(default_factory=queue.Queue)
    _base: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="gapscope-t2-")))
    sandboxed: bool = field(init=False)
    held: RunBounds = field(init=False)
    """How every ``lake`` call is held (probed once, with the configured ``lake`` and root)."""
    _lock: threading.RLock = field(default_factory=threading.RLock)
    _originals: dict[Path, str] = field(default_factory=dict)
    _lakes: set[int] = field(default_factory=set)
    _stopped: bool = False
    controls: Controls = field(default_factory=Controls)
    """The original's builds after a limit stopped an answer's (cached for the run)."""

    def __post_init__(self) -> None:
        try:  # before any copy is made, so a refusal (SandboxUnavailable) costs nothing
            requested = self.config.sandbox
            self.sandboxed = decide_sandbox(
                sandbox_choice() if requested is None else requested,
                unsandboxed_allowed(self.config.allow_unsandboxed),
                "T2's lake builds",
            )
            config = self.config
            self.held = run_bounds(
                LAKE_CALL, config.bounds, self.sandboxed, config.lake, config.root
            )
        except Exception:
            shutil.rmtree(self._base, ignore_errors=True)
            raise
        if self.held.run_as is not None:  # its sandbox reaches the copies through this folder
            self._base.chmod(0o711)
        for n in range(self.config.workers):
            slot = self._base / f"worker_{n}"
            slot.mkdir()
            self._free.put(slot)
        _guard(self)

    @contextlib.contextmanager
    def project(self, record: T2Record) -> Iterator[Path]:
        """This worker's copy of the record's project (copied on first use)."""
        source = project_dir(self.config.root, record)
        slot = self._free.get()
        try:
            copy = slot / source.name
            if not copy.exists():
                shutil.copytree(source, copy, symlinks=True)
            yield copy
        finally:
            self._free.put(slot)

    @property
    def bounds(self) -> str:
        """The limits in force per ``lake`` call (:meth:`gapscope.lean.RunBounds.describe`)."""
        return self.held.describe()

    def run_lake(
        self, project: Path, args: Sequence[str], timeout_s: float, keep: Keep | None = None
    ) -> Run:
        """``lake ARGS`` in a worker's copy ``project``: sandboxed with only the copy writable,
        held to the bounds, its process group killed by ``stop``; ``keep``: the lines of its
        output kept wherever they came (:attr:`gapscope.lean.Run.kept`)."""
        with self._lock:
            if self._stopped:
                raise OSError("the process is being terminated")
        command = (*self.config.lake, *args)
        return self.held.run(
            command, project, timeout_s, (project,), running=self._lakes, keep=keep
        )

    @contextlib.contextmanager
    def substituted(self, path: Path) -> Iterator[tuple[str, Callable[[str], None]]]:
        """``(original text, write)`` for a file of a copy; the original is back on exit."""
        original = path.read_text(encoding="utf-8")

        def write(text: str) -> None:
            with self._lock:
                if self._stopped:
                    raise OSError("the process is being terminated")
                self._originals[path] = original
                path.write_text(text, encoding="utf-8")

        try:
            yield original, write
        finally:
            with self._lock:
                path.write_text(original, encoding="utf-8")
                self._originals.pop(path, None)

    def stop(self) -> None:
        """Put every original back and kill every ``lake``: the process is terminating."""
        with self._lock:
            self._stopped = True
            for path, text in self._originals.items():
                path.write_text(text, encoding="utf-8")
            self._originals.clear()
            for group in list(self._lakes):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(group, signal.SIGKILL)

    def close(self) -> None:
        _unguard(self)
        shutil.rmtree(self._base, ignore_errors=True)


_TERMINATING = (signal.SIGTERM, signal.SIGHUP)
_live: weakref.WeakSet[Workspaces] = weakref.WeakSet()
_previous: dict[int, Any] = {}


def _on_terminate(signum: int, frame: FrameType | None) -> None:
    for workspaces in list(_live):
        workspaces.stop()
    previous = _previous.get(signum, signal.SIG_DFL)
    if callable(previous):
        previous(signum, frame)
        return
    signal.signal(signum, previous)  # the default: end the process as the sender asked
    os.kill(os.getpid(), signum)


def _guard(workspaces: Workspaces) -> None:
    """Route SIGTERM/SIGHUP through ``stop`` while any workspaces live (main thread only:
    Python sets handlers nowhere else; a run started elsewhere keeps the finally alone)."""
    _live.add(workspaces)
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in _TERMINATING:
        current = signal.getsignal(signum)
        if current not in (_on_terminate, signal.SIG_IGN):
            _previous[signum] = current
            signal.signal(signum, _on_terminate)


def _unguard(workspaces: Workspaces) -> None:
    _live.discard(workspaces)
    if _live or threading.current_thread() is not threading.main_thread():
        return
    for signum, previous in list(_previous.items()):
        if signal.getsignal(signum) is _on_terminate:
            signal.signal(signum, previous)
        del _previous[signum]


def evaluate_in_repo(
    record: T2Record,
    answer: Answer,
    workspaces: Workspaces,
    screen: Screen | None = None,
) -> SampleResult:
    """Substitute, compile, build; settle the sample's verdicts (module docstring)."""
    code = code_to_check(answer, record, screen)
    if isinstance(code, SampleResult):
        return code
    config = workspaces.config
    relative = target_file(record)
    module = module_of(relative)
    with (
        workspaces.project(record) as project,
        workspaces.substituted(file_in(project, record)) as (original, write),
    ):
        if original.count(record.target_code) != 1:
            detail = f"target_code occurs {original.count(record.target_code)} times in {relative}"
            return SampleResult(SampleOutcome.SERVER_ERROR, detail=detail)
        start = original.index(record.target_code)
        prefix, suffix = original[:start], original[start + len(record.target_code) :]
        code = code.strip("\n")
        modules = (module, *dependents(project, module))
        try:
            write(prefix + code + "\n")
            compiled = workspaces.run_lake(
                project, ("env", "lean", relative), config.compile_timeout_s
            )
            limit = workspaces.held.exceeded(compiled)
            if limit is None:
                write(prefix + code + suffix)
                built = workspaces.run_lake(
                    project, ("build", *modules), config.build_timeout_s, decisive
                )
                limit = workspaces.held.exceeded(built)
            if limit is not None:
                source = project_dir(config.root, record)
                return _stopped(limit, workspaces, (source, project), modules, original, write)
        except OSError as exc:
            detail = f"cannot run lake: {exc}"
            return SampleResult(SampleOutcome.SERVER_ERROR, detail=detail, bounds=workspaces.bounds)
    compile_rc = compiled.code
    return verdicts(
        record, relative, code, prefix, suffix, modules, compile_rc, built, workspaces.bounds
    )


def _stopped(
    limit: str,
    workspaces: Workspaces,
    where: tuple[Path, Path],
    modules: tuple[str, ...],
    original: str,
    write: Callable[[str], None],
) -> SampleResult:
    """A sample whose ``lake`` call ``limit`` stopped: the answer's failure where the
    original's build of the same modules gets a verdict under the same bounds (the control,
    :mod:`gapscope.t2.repo_control`, built in the worker's copy once per project and
    modules: ``where`` is the project and that copy), else a ``server_error``."""
    source, project = where

    def control() -> Run:
        write(original + CONTROL_MARK)
        return workspaces.run_lake(project, ("build", *modules), workspaces.config.build_timeout_s)

    failure = workspaces.controls.failure((source, modules), control, workspaces.held)
    if failure is not None:
        detail = f"{limit}; {failure}"
        return SampleResult(SampleOutcome.SERVER_ERROR, detail=detail, bounds=workspaces.bounds)
    return SampleResult(
        SampleOutcome.BROKE_CHECK,
        detail=f"{limit}; the original's build of the same modules did not reach it (control)",
        selftest=False,  # as a checked sample of this track: gapscope.t2.untested
        bounds=workspaces.bounds,
    )
