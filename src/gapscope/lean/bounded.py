"""One run of a Lean tool on untrusted code, held as a REPL is held: a kernel check, a T2
``lake`` call, a program of the self-test.

A pooled REPL is bounded per process, for its life (``gapscope.lean.pool``); every other
program that builds or elaborates model-written Lean starts afresh for one job, so it is
bounded per run. :class:`RunBounds` gives each run the mechanism
:mod:`gapscope.lean.bounding` finds here, probed once with the run's own program and project
(as a REPL's backend probes it): a cgroup of its own (memory, processes and CPU of everything
it starts); else, as root, bubblewrap started as an unprivileged uid with ``RLIMIT_NPROC``
set inside the sandbox (``prlimit``), the folders it writes handed to that uid first; else
nothing, and :meth:`RunBounds.describe` says why. A run its cgroup stopped - the OOM killer
acted, or a fork was refused at the process limit - is killed at once (polled every
:data:`POLL_S`) and :meth:`RunBounds.exceeded` names the limit: callers report it as a
``server_error`` (the harness's limit, not a verdict on the code) and never cache it. So is a
run whose output, a file on this host's disk, reached ``Bounds.output_mb``: ``RLIMIT_FSIZE``
stops its writer there, so the file never grows past it, whatever the run does meanwhile.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from gapscope.lean.bounding import Containment
from gapscope.lean.cgroup import MB, AttemptCgroup, Bounds
from gapscope.lean.childenv import child_environment
from gapscope.lean.output import Keep, selected_lines, tail
from gapscope.lean.process import POLL_S, die_with_parent
from gapscope.lean.sandbox import SANDBOX_TMP_MB, lean_containment, nproc_limited, sandbox_argv

LAKE_CALL = "lake call"
"""The unit a ``lake`` run is bounded as (T2's builds, the self-test's compiles and probes)."""


@dataclass(frozen=True)
class Run:
    """A finished command: exit code (None: killed at the deadline or by its cgroup's limit;
    negative: the signal that killed it) and its output."""

    code: int | None
    output: str
    out_of_memory: bool = False
    """Whether the kernel's OOM killer acted in the command's cgroup."""
    at_process_limit: bool = False
    """Whether a fork in the command's cgroup was refused at its process limit."""
    kept: tuple[str, ...] | None = None
    """The lines of the whole output the caller's ``keep`` selected, wherever they came
    (``output`` is only its tail); None without ``keep`` or where too many were selected
    (:func:`gapscope.lean.output.selected_lines`)."""
    output_bytes: int = 0
    """How much the command printed in all (never past the run's output cap)."""


def run_bounded(
    argv: Sequence[str],
    cwd: Path,
    timeout_s: float,
    env: Mapping[str, str] | None = None,
    cgroup: AttemptCgroup | None = None,
    user: Mapping[str, Any] | None = None,
    running: set[int] | None = None,
    keep: Keep | None = None,
    output_cap: int | None = None,
) -> Run:
    """Run ``argv`` with a wall-clock limit; the process group dies at the deadline and with
    its owner, and only the tail of its output is kept (:mod:`gapscope.lean.output`), with
    every line of it ``keep`` selects. ``output_cap``: the bytes its output file may reach
    (``RLIMIT_FSIZE`` on ``argv`` and all it starts); it is killed once the file is that
    long. With a
    ``cgroup``, ``argv`` joins it before it execs, and whatever of it is left when ``argv``
    ends is killed with the cgroup. ``user``: ``Popen`` arguments starting it under another
    uid (:meth:`Containment.popen_user`); ``running`` holds its process group while it runs
    (so that a signal handler can kill it)."""
    command = cgroup.wrap(argv) if cgroup is not None else list(argv)
    with tempfile.TemporaryFile() as sink:
        with subprocess.Popen(
            command,
            cwd=cwd,
            env=child_environment(env),
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_prepare(output_cap),
            **(user or {}),
        ) as proc:
            if running is not None:
                running.add(proc.pid)
            try:
                stopped = _limit_reached(sink, output_cap, cgroup)
                code = _wait(proc, time.monotonic() + max(timeout_s, 0.01), stopped)
            finally:
                if running is not None:
                    running.discard(proc.pid)
        output, size = tail(sink), os.fstat(sink.fileno()).st_size
        kept = selected_lines(sink, keep) if keep is not None else None
    if cgroup is None:
        return Run(code, output, kept=kept, output_bytes=size)
    cgroup.kill()
    oom, at_limit = cgroup.oom_kills() > 0, cgroup.process_limit_hits() > 0
    return Run(code, output, oom, at_limit, kept, size)


def _prepare(output_cap: int | None) -> Callable[[], None]:
    """What the child does before it execs: die with its parent, and write no file past
    ``output_cap`` bytes (the writer gets ``SIGXFSZ`` or ``EFBIG``; inherited by all it
    starts, and a sandbox without capabilities cannot raise it)."""

    def prepare() -> None:
        die_with_parent()
        if output_cap is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (output_cap, output_cap))

    return prepare


def _limit_reached(
    sink: BinaryIO,
    output_cap: int | None,
    cgroup: AttemptCgroup | None,
) -> Callable[[], bool] | None:
    """Whether a limit stopped the run, polled while it runs (None: nothing to poll): its
    output reached ``output_cap`` (a writer that ignores ``SIGXFSZ`` would print on into
    ``EFBIG`` until the deadline), or its cgroup stopped something: the OOM killer acted (on
    cgroup v1 it kills one process, and the rest would wait for the deadline), or a fork was
    refused at the process limit (a fork loop retries until the deadline)."""
    if output_cap is None and cgroup is None:
        return None

    def reached() -> bool:
        if output_cap is not None and os.fstat(sink.fileno()).st_size >= output_cap:
            return True
        return cgroup is not None and bool(cgroup.oom_kills() or cgroup.process_limit_hits())

    return reached


def _wait(
    proc: subprocess.Popen[bytes], deadline: float, stopped: Callable[[], bool] | None
) -> int | None:
    """``proc``'s exit code; None where it was killed at ``deadline`` or, polled every
    :data:`POLL_S`, once ``stopped`` says a limit stopped it."""
    while (left := deadline - time.monotonic()) > 0:
        try:
            return proc.wait(timeout=min(left, POLL_S) if stopped is not None else left)
        except subprocess.TimeoutExpired:
            if stopped is not None and stopped():
                break
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    return None


def hand_over(folder: Path, uid: int) -> None:
    """Give ``folder`` and everything in it to ``uid``, the sandbox then writing there as that
    uid; a folder that is already that uid's is left alone (a T2 worker's copy is handed over
    on its first build, not on every one). Links are changed, never followed."""
    if folder.lstat().st_uid == uid:
        return
    for root, folders, files in os.walk(folder):
        for name in (*folders, *files):
            os.lchown(os.path.join(root, name), uid, uid)
    os.lchown(folder, uid, uid)  # last: a folder already the uid's was handed over whole


@dataclass(frozen=True)
class RunBounds:
    """How every run of one kind (``unit``: a kernel check, a lake call) is held here."""

    unit: str
    bounds: Bounds | None
    """What one run may use with all it starts (None: nothing asked, nothing probed)."""
    sandboxed: bool
    containment: Containment | None = None
    """The mechanism (None when the run is unsandboxed or ``bounds`` is None)."""

    @property
    def run_as(self) -> int | None:
        """The uid bubblewrap is started under (root only; None: this process's own)."""
        return self.containment.run_as if self.containment is not None else None

    def describe(self) -> str:
        """The limits in force per run, e.g. ``per lake call (cgroup v1): memory 8192 MB,
        512 processes, 1 CPU; /tmp 256 MB``, or ``nothing per lake call (...)`` with the
        reason (the sandbox's ``/tmp`` is capped whatever holds the run)."""
        if not self.sandboxed:
            return f"nothing per {self.unit} (unsandboxed)"
        if self.containment is None or self.bounds is None:
            held = f"nothing per {self.unit} (no bounds asked)"
        else:
            held = self.containment.describe(self.bounds, self.unit)
        return f"{held}; /tmp {SANDBOX_TMP_MB} MB"

    def argv(
        self,
        command: Sequence[str],
        project: Path,
        writable: Sequence[Path] = (),
        env: Mapping[str, str] | None = None,
    ) -> list[str]:
        """``command`` as it is started: in the sandbox (when sandboxed), under
        ``RLIMIT_NPROC`` inside it when that is the mechanism."""
        if not self.sandboxed:
            return list(command)
        contained, bounds = self.containment, self.bounds
        if contained is not None and bounds is not None and contained.by_rlimits:
            command = nproc_limited(command, bounds.processes)
        return sandbox_argv(command, project, writable=writable, env=env)

    def run(
        self,
        command: Sequence[str],
        project: Path,
        timeout_s: float,
        writable: Sequence[Path] = (),
        env: Mapping[str, str] | None = None,
        running: set[int] | None = None,
        keep: Keep | None = None,
    ) -> Run:
        """``command`` in ``project``, ``writable`` its only writable folders, held to the
        bounds (:func:`run_bounded`, ``keep`` with it; :meth:`exceeded` says whether a limit
        stopped it)."""
        argv = self.argv(command, project, writable, env)
        uid = self.run_as
        if uid is not None:
            for folder in writable:
                hand_over(folder, uid)
        contained, bounds = self.containment, self.bounds
        cgroup, user = None, {}
        if contained is not None and bounds is not None:
            cgroup, user = contained.open(bounds), contained.popen_user()
        try:
            cap = bounds.output_mb * MB if bounds is not None else None
            return run_bounded(argv, project, timeout_s, env, cgroup, user, running, keep, cap)
        finally:
            if cgroup is not None:
                cgroup.remove()

    def exceeded(self, run: Run) -> str | None:
        """The limit that stopped ``run`` (its cgroup's memory or process count, its output's
        size), said for a ``server_error``; None where none did."""
        if self.bounds is None:
            return None
        if run.out_of_memory:
            return (
                f"killed: the {self.unit}'s memory limit of {self.bounds.memory_mb} MB (all its "
                "processes together, its cgroup) was reached"
            )
        if run.at_process_limit:
            return (
                f"killed: the {self.unit}'s limit of {self.bounds.processes} processes (all its "
                "processes and threads together, its cgroup) was reached"
            )
        if run.output_bytes >= self.bounds.output_mb * MB:
            return (
                f"killed: the {self.unit}'s output limit of {self.bounds.output_mb} MB (all it "
                "printed, a file on this host's disk) was reached"
            )
        return None


def run_bounds(
    unit: str,
    bounds: Bounds | None,
    sandboxed: bool,
    command: Sequence[str],
    project: Path,
    env: Mapping[str, str] | None = None,
) -> RunBounds:
    """How runs of ``command`` in ``project`` are held (probed once per command, project and
    setting: :func:`gapscope.lean.sandbox.lean_containment`)."""
    if not sandboxed or bounds is None:
        return RunBounds(unit, bounds, sandboxed)
    return RunBounds(unit, bounds, True, lean_containment(command, project, env))
