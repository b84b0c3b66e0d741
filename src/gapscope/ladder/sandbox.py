"""Run one code attempt on its tests in a bubblewrap sandbox here; the parent judges.

The code pilot's verifier is test execution (seed Appendix O), and the code is a model's: it
may loop forever, fork without end, allocate 10 GB, open a socket, or try to fake a pass. So:

* **The judge stays out of reach.** The child (:mod:`gapscope.ladder.sandbox_child`) gets the
  program and the tests' inputs only, and writes each test's raw output or return value to a
  pipe only this process reads; :class:`gapscope.ladder.judge.Judge` compares them with the
  expected outputs here, and a wrong answer stops the child at once. No result file exists.
* **Fail closed.** Attempts run under bubblewrap (``bwrap``); where it does not work (probed
  by :func:`bwrap_status`, which starts this very sandbox), :func:`local_layer` refuses with
  the fix, the decision :func:`gapscope.lean.sandbox.require_sandbox` takes for Lean too,
  unless the user passed ``allow_unsandboxed``: then the attempt runs here on resource limits
  and an audit hook, which a hostile program gets round, and every result says so.
* **Inside the sandbox** (:func:`bwrap_argv`): new PID, network, IPC, UTS, mount, user and
  cgroup namespaces, every capability dropped; a root holding only the system folders and
  the interpreter's installation, read-only; a fresh ``/proc`` of the sandbox's own PIDs; a
  private ``/dev``; the attempt's folder (``/attempt``) a size-capped in-memory file system,
  the one writable place; an environment of PATH, HOME, TMPDIR and LANG only; its own
  session; death with its parent; ``/dev`` read-only. The child lowers its resource limits
  (memory, CPU seconds, file size, open files, processes, no core dumps) before the attempt
  runs.
* **Bounded together.** Those limits hold per process; where this host offers a cgroup
  (:func:`gapscope.lean.cgroup_support`) every attempt also gets its own, whose memory,
  process count and CPU share bound everything the attempt starts together. An attempt the
  kernel's OOM killer touched is stopped at once and reported as over its memory limit.
  Without a cgroup, as root, the sandbox is started as an unprivileged uid so that the
  kernel enforces the child's ``RLIMIT_NPROC`` (:mod:`gapscope.lean.bounding`). Every result
  names the mechanism and the limits that held (:func:`bounds_in_force`).
* **Killed whole.** Past the wall-clock limit the sandbox's init is killed, which kills every
  process of its PID namespace, setsid'd children included; the attempt is reported only
  once none of them runs.

Without a cgroup, and as root where no unprivileged uid can start the sandbox (the kernel does
not enforce ``RLIMIT_NPROC`` on root), a fork bomb is held only by the audit hook's block on
process creation (which a renamed extension module gets round) and the wall-clock kill, and
every result says so (docs/ladder.md, threat model).
"""

from __future__ import annotations

import contextlib
import functools
import glob
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import gapscope
from gapscope.ladder.judge import CodeTest, Judge, Status, Verdict, child_job
from gapscope.lean import (
    READ_ONLY_DEV,
    AttemptCgroup,
    Bounds,
    Containment,
    SandboxStatus,
    containment,
    require_sandbox,
    sized_tmpfs,
)

__all__ = [
    "CodeTest",
    "Isolation",
    "Limits",
    "RunResult",
    "Status",
    "attempt_containment",
    "bounds_in_force",
    "bwrap_status",
    "local_layer",
    "run_tests",
]

CHILD = Path(__file__).with_name("sandbox_child.py")
ATTEMPT_DIR = "/attempt"
"""The attempt's folder inside the sandbox: its working directory, HOME and TMPDIR."""
CHILD_IN_SANDBOX = "/gapscope_child.py"
EMPTY_COVER_MB = 1
"""The size of each empty read-only tmpfs that covers a folder of answers or packages."""
SYSTEM_FOLDERS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_FILES = ("/etc/ld.so.cache",)
WHAT = "the model's Python code (code pilot)"


class Isolation(StrEnum):
    """Where a local attempt ran: in the bubblewrap sandbox, or (allowed) on this host."""

    BWRAP = "bwrap"
    UNSANDBOXED = "unsandboxed"


@dataclass(frozen=True)
class Limits:
    """What one attempt may use; defaults fit small programming-contest problems."""

    time_s: float = 10.0
    cpu_s: int = 10
    memory_mb: int = 1024
    processes: int = 64
    cpus: float = 1.0
    """The CPUs' share all the attempt's processes together may use (with a cgroup)."""
    file_mb: int = 16
    open_files: int = 64
    output_mb: int = 16
    """The most the parent reads back from one attempt (every test's output together)."""
    allow_processes: bool = False
    """Let the attempt start processes (only for tests of the kill path; never for models)."""
    hidden: tuple[str, ...] = ()
    """Files or folders holding the expected outputs (the ``--problems`` file) that the
    sandbox covers where one of its mounts would show them."""

    def rlimits(self) -> dict[str, int]:
        mb = 1024 * 1024
        return {
            "RLIMIT_AS": self.memory_mb * mb,
            "RLIMIT_CPU": self.cpu_s,
            "RLIMIT_FSIZE": self.file_mb * mb,
            "RLIMIT_NOFILE": self.open_files,
            "RLIMIT_NPROC": self.processes,
            "RLIMIT_CORE": 0,
        }

    def bounds(self) -> Bounds:
        """What the attempt's cgroup holds, all its processes together."""
        return Bounds(self.memory_mb, self.processes, self.cpus)


@dataclass(frozen=True)
class RunResult:
    """One attempt's verdict, with where it ran (``isolation``) and whether that was a
    sandbox at all (``sandboxed``)."""

    status: Status
    passed: int
    total: int
    detail: str
    isolation: str
    sandboxed: bool
    seconds: float
    bounds: str
    """Which limits held, and how (:func:`bounds_in_force`)."""

    @property
    def solved(self) -> bool:
        return self.status is Status.PASSED


def _interpreter() -> str:
    return os.path.realpath(sys.executable)


def _runtime_mounts(hidden: Sequence[str] = ()) -> list[str]:
    """The system folders and the interpreter's installation, read-only: what
    ``python -I -S`` needs, and nothing of the user's (no home, no /tmp, no /work); then,
    over whatever of those mounts holds them, the places the answers can be read from
    (:func:`_hidden_mounts`)."""
    args: list[str] = []
    for path in SYSTEM_FOLDERS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    bound = [p for p in SYSTEM_FOLDERS if os.path.isdir(p) and not os.path.islink(p)]
    interpreter = Path(_interpreter())
    for folder in dict.fromkeys((os.path.realpath(sys.base_prefix), str(interpreter.parents[1]))):
        if not _under(folder, bound):
            args += ["--ro-bind", folder, folder]
            bound.append(folder)
    for file in SYSTEM_FILES:
        if os.path.isfile(file):
            args += ["--ro-bind", file, file]
    return args + _hidden_mounts(bound, hidden)


def _under(path: str, folders: Sequence[str]) -> bool:
    return any(path == f or path.startswith(f.rstrip(os.sep) + os.sep) for f in folders)


def _stdlib() -> set[str]:
    """The folders of the standard library, the one thing on ``sys.path`` the child needs
    (``python -I -S`` imports nothing else)."""
    base = os.path.realpath(sys.base_prefix)
    scheme = sysconfig.get_paths(
        vars={"base": base, "platbase": base, "installed_base": base, "installed_platbase": base}
    )
    found = {scheme["stdlib"], scheme["platstdlib"]}
    found |= {os.path.join(f, "lib-dynload") for f in found}
    return {os.path.realpath(f) for f in found}


def _readable_elsewhere() -> set[str]:
    """Every folder of Python code or data this process can import from but the child does
    not need: the site- and dist-packages of every prefix (a venv made with ``--copies`` is
    bound whole, with its site-packages), every ``sys.path`` entry that is not the standard
    library (a checkout on ``PYTHONPATH``), and gapscope's own package, whose ``data`` holds
    every bundled test's input and output."""
    found: set[str] = set()
    for prefix in {sys.base_prefix, sys.prefix, sys.exec_prefix}:
        base = os.path.realpath(prefix)
        scheme = sysconfig.get_paths(vars={"base": base, "platbase": base})
        found |= {scheme["purelib"], scheme["platlib"]}
    for pattern in ("/usr/lib/python3*/*-packages", "/usr/local/lib/python3*/*-packages"):
        found.update(glob.glob(pattern))
    found.update(entry or os.curdir for entry in sys.path)
    found.add(str(Path(gapscope.__file__).parent))
    return {os.path.realpath(f) for f in found if os.path.isdir(f)} - _stdlib()


def _hidden_mounts(bound: Sequence[str], hidden: Sequence[str]) -> list[str]:
    """Empty read-only folders over :func:`_readable_elsewhere` and over each folder in
    ``hidden`` (the problems file's), where a bound mount makes them visible. A folder the
    sandbox needs (an ancestor of the interpreter, the standard library or a system folder)
    is never covered; a hidden file in one is covered alone, by ``/dev/null``."""
    needed = [_interpreter(), *_stdlib(), *SYSTEM_FOLDERS, *SYSTEM_FILES]
    folders = set(_readable_elsewhere())
    files: set[str] = set()
    for path in (os.path.realpath(h) for h in hidden):
        folder = path if os.path.isdir(path) else os.path.dirname(path)
        if any(_under(n, [folder]) for n in needed):
            files |= {path} if os.path.isfile(path) else set()
        else:
            folders.add(folder)
    args: list[str] = []
    covered: list[str] = []
    for folder in sorted(f for f in folders if _under(f, bound)):
        if _under(folder, covered) or any(_under(n, [folder]) for n in needed):
            continue  # already empty, or the sandbox needs it
        args += [*sized_tmpfs(folder, EMPTY_COVER_MB), "--remount-ro", folder]
        covered.append(folder)
    for file in sorted(f for f in files if _under(f, bound) and not _under(f, covered)):
        args += ["--ro-bind", os.devnull, file]
    return args


def bwrap_argv(bwrap: str, limits: Limits, info_fd: int | None = None) -> list[str]:
    """The sandbox around one attempt, up to and including the ``--``."""
    info = ["--info-fd", str(info_fd)] if info_fd is not None else []
    return [
        bwrap,
        "--unshare-all", "--cap-drop", "ALL", "--die-with-parent", "--new-session",
        "--clearenv",
        "--setenv", "PATH", "/usr/bin:/bin",
        "--setenv", "HOME", ATTEMPT_DIR,
        "--setenv", "TMPDIR", ATTEMPT_DIR,
        "--setenv", "LANG", "C.UTF-8",
        *_runtime_mounts(limits.hidden),
        "--ro-bind", str(CHILD), CHILD_IN_SANDBOX,
        *READ_ONLY_DEV,
        "--proc", "/proc",
        *sized_tmpfs(ATTEMPT_DIR, attempt_folder_mb(limits)),
        "--chdir", ATTEMPT_DIR,
        "--remount-ro", "/",
        *info,
        "--",
    ]  # fmt: skip


def attempt_folder_mb(limits: Limits) -> int:
    """The size of ``/attempt``, the one writable place in the sandbox."""
    return limits.file_mb * 4


def bounds_in_force(
    limits: Limits, contained: Containment, cgroup: AttemptCgroup | None, layer: Isolation
) -> str:
    """Which limits hold an attempt, and how: per attempt (its cgroup, or the processes its
    uid may have) where the host allows, per process always, and the sandbox's file systems."""
    per_process = (
        f"per process: {limits.memory_mb} MB address space, {limits.cpu_s} s CPU, "
        f"{limits.file_mb} MB per file, {limits.open_files} open files"
    )
    together = cgroup.describe() if cgroup is not None else contained.describe(limits.bounds())
    files = (
        f"/attempt {attempt_folder_mb(limits)} MB, /dev read-only"
        if layer is Isolation.BWRAP
        else "files: this host's"
    )
    return f"{together}; {per_process}; {files}; {limits.time_s:g} s wall clock"


def attempt_containment(layer: Isolation) -> Containment:
    """What holds an attempt's processes together in ``layer`` (:mod:`gapscope.lean.bounding`):
    the fallback's uid is probed with this very sandbox; unsandboxed, there is none to start
    under another uid."""
    bwrap = shutil.which("bwrap")
    if layer is Isolation.UNSANDBOXED or bwrap is None:
        return containment(None)
    return containment(_probe(bwrap))


def _probe(bwrap: str) -> list[str]:
    """The sandbox with the default limits, running the interpreter once."""
    return [*bwrap_argv(bwrap, Limits()), _interpreter(), "-I", "-S", "-c", "pass"]


@functools.cache
def bwrap_status() -> SandboxStatus:
    """Whether the attempts' sandbox starts here, probed once by running the interpreter in
    it: bwrap can be installed where user namespaces are turned off, and the interpreter
    must be reachable through the sandbox's few mounts."""
    path = shutil.which("bwrap")
    if path is None:
        return SandboxStatus(False, "bubblewrap (bwrap) not found")
    try:
        done = subprocess.run(_probe(path), capture_output=True, text=True, timeout=30, env={})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return SandboxStatus(False, f"{path} cannot run: {exc}")
    if done.returncode != 0:
        return SandboxStatus(False, f"{path} cannot build the sandbox: {done.stderr.strip()}")
    return SandboxStatus(
        True, f"{path}: own PID/network/IPC/mount namespaces, read-only system, no host /proc"
    )


def local_layer(allow_unsandboxed: bool) -> Isolation:
    """BWRAP where the sandbox works; otherwise SandboxUnavailable with the fix, or, with
    ``allow_unsandboxed``, UNSANDBOXED and a logged warning."""
    sandboxed = require_sandbox(allow_unsandboxed, WHAT, bwrap_status())
    return Isolation.BWRAP if sandboxed else Isolation.UNSANDBOXED


def run_tests(
    program: str,
    tests: Sequence[CodeTest],
    entry: str | None,
    limits: Limits = Limits(),
    layer: Isolation | None = None,
    cancel: threading.Event | None = None,
) -> RunResult:
    """Run ``program`` on ``tests`` in a fresh sandbox; stop at the first failing test.

    ``entry`` names the function call tests call (a top-level function, or a method of a
    ``Solution`` class as LiveCodeBench writes them); None means stdin/stdout tests.
    ``layer`` is where it runs (default: the sandbox, refused where it does not work).
    ``cancel``, once set (the run was interrupted), kills the attempt within ``POLL_S``
    instead of at its time limit; the result then says so (ERROR, :data:`CANCELLED`).
    """
    layer = layer or local_layer(False)
    started = time.monotonic()
    fds: tuple[int, ...]
    with contextlib.ExitStack() as stack:
        descriptors = Descriptors(stack)
        channel_r, channel_w = descriptors.pipe()
        if layer is Isolation.BWRAP:
            info_r, info_w = descriptors.pipe()
            command = [*bwrap_argv(shutil.which("bwrap") or "bwrap", limits, info_w)]
            command += [_interpreter(), "-I", "-S", CHILD_IN_SANDBOX]
            root, cwd, fds = ATTEMPT_DIR, None, (channel_w, info_w)
        else:
            info_r = None
            cwd = stack.enter_context(tempfile.TemporaryDirectory(prefix="gapscope-code-"))
            command = [_interpreter(), "-I", "-S", str(CHILD)]
            root, fds = cwd, (channel_w,)
        job = child_job(
            program,
            tests,
            entry,
            limits.rlimits(),
            channel=channel_w,
            root=root,
            allow_processes=limits.allow_processes,
        )
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
        if cwd is not None:  # bubblewrap sets the sandbox's own (--clearenv, --setenv)
            env |= {"HOME": cwd, "TMPDIR": cwd}
        contained = attempt_containment(layer)
        cgroup = contained.open(limits.bounds())
        if cgroup is not None:  # removed after the attempt is stopped (the stack is LIFO)
            stack.callback(cgroup.remove)
            command = cgroup.wrap(command)
        attempt = Attempt(command, json.dumps(job).encode(), env, cwd, limits, stack, cgroup)
        attempt.cancel = cancel
        attempt.start(fds, descriptors.close, contained.popen_user())
        verdict = attempt.judge(Judge(tests, entry), channel_r, info_r)
    return RunResult(
        verdict.status,
        verdict.passed,
        len(tests),
        verdict.detail,
        layer.value,
        layer is Isolation.BWRAP,
        time.monotonic() - started,
        bounds_in_force(limits, contained, cgroup, layer),
    )


class Descriptors:
    """The pipes' descriptors this attempt owns, each closed exactly once (a second close of
    a number another thread has reused meanwhile would close that thread's file)."""

    def __init__(self, stack: contextlib.ExitStack) -> None:
        self.open: set[int] = set()
        stack.callback(self.close_all)

    def pipe(self) -> tuple[int, int]:
        read, write = os.pipe()
        self.open |= {read, write}
        return read, write

    def close(self, fd: int) -> None:
        if fd in self.open:
            self.open.discard(fd)
            os.close(fd)

    def close_all(self) -> None:
        for fd in list(self.open):
            self.close(fd)


OVER_LIMIT = "output over the limit"
POLL_S = 0.05
"""How often a running attempt with a cgroup is checked for an OOM kill, and one that can be
cancelled for the cancellation."""
CANCELLED = "cancelled: the run was interrupted"
KILL_WAIT_S = 5.0
"""How long to wait for killed processes to die (SIGKILL is delivered asynchronously; a
process still running when the attempt is reported would outlive it)."""


class Attempt:
    """One child process: started, read, judged, and killed with everything it started."""

    def __init__(
        self,
        command: list[str],
        job: bytes,
        env: dict[str, str],
        cwd: str | None,
        limits: Limits,
        stack: contextlib.ExitStack,
        cgroup: AttemptCgroup | None = None,
    ) -> None:
        self.command, self.env, self.cwd, self.limits = command, env, cwd, limits
        self.cgroup = cgroup
        # unnamed files, closed by the stack: the job leaves no file for the attempt to find
        self.stdin = stack.enter_context(tempfile.TemporaryFile())  # noqa: SIM115
        self.stdin.write(job)
        self.stdin.seek(0)
        self.stderr = stack.enter_context(tempfile.TemporaryFile())  # noqa: SIM115
        self.stack = stack
        self.namespace: int | None = None
        self.stopped = False
        self.cancel: threading.Event | None = None

    def start(
        self, fds: tuple[int, ...], close: Callable[[int], None], user: Mapping[str, Any]
    ) -> None:
        """Start the child with ``fds`` (the pipes' write ends), then ``close`` ours: the
        read ends see EOF once every process holding a write end is gone. ``user``: the
        uid to start it under (:meth:`gapscope.lean.Containment.popen_user`)."""
        self.process = subprocess.Popen(
            self.command,
            cwd=self.cwd,
            env=self.env,
            stdin=self.stdin,
            stdout=self.stderr,
            stderr=self.stderr,
            pass_fds=fds,
            start_new_session=True,
            **user,
        )
        self.stack.callback(self._stop)
        for fd in fds:
            close(fd)

    def judge(self, judge: Judge, channel: int, info: int | None) -> Verdict:
        """Feed the channel to ``judge`` until it decides, the channel closes or time is up;
        then stop the child and say why it ended where the judge did not."""
        deadline = time.monotonic() + self.limits.time_s
        cap = self.limits.output_mb * 1024 * 1024
        received, pending, info_text = 0, b"", b""
        with selectors.DefaultSelector() as selector:
            selector.register(channel, selectors.EVENT_READ)
            if info is not None:
                selector.register(info, selectors.EVENT_READ)
            while judge.verdict is None and selector.get_map():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                if self._out_of_memory():
                    self._stop()
                    return Verdict(Status.MEMORY, judge.passed, memory_detail(self.limits))
                if self.cancel is not None and self.cancel.is_set():
                    self._stop()
                    return Verdict(Status.ERROR, judge.passed, CANCELLED)
                polled = self.cgroup is not None or self.cancel is not None
                wait = min(remaining, POLL_S) if polled else remaining
                for key, _ in selector.select(wait):
                    data = os.read(key.fd, 1 << 16)
                    if not data:
                        selector.unregister(key.fd)
                    elif key.fd == info:
                        info_text += data
                        self.namespace = _namespace(info_text, self.namespace)
                    else:
                        received += len(data)
                        if received > cap:
                            self._stop()
                            return Verdict(Status.ERROR, judge.passed, OVER_LIMIT)
                        *whole, pending = (pending + data).split(b"\n")
                        for line in whole:
                            judge.feed(line)
        if judge.verdict is not None:
            self._stop()
            return judge.verdict
        return self._ending(judge.passed, deadline)

    def _ending(self, passed: int, deadline: float) -> Verdict:
        """Why a child that left the verdict open ended: its exit, or the deadline."""
        try:
            code = self.process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            code = None
        self._stop()
        if self._out_of_memory():
            return Verdict(Status.MEMORY, passed, memory_detail(self.limits))
        if code is None:
            return Verdict(Status.TIMEOUT, passed, wall_clock_detail(self.limits))
        self.stderr.seek(0, os.SEEK_END)
        self.stderr.seek(max(0, self.stderr.tell() - TAIL_BYTES))
        return exit_verdict(code, self.stderr.read(), passed, self.limits)

    def _out_of_memory(self) -> bool:
        """Whether the kernel killed one of the attempt's processes for passing its cgroup's
        memory limit (the rest then go too: an attempt is held to its limit whole)."""
        return self.cgroup is not None and self.cgroup.oom_kills() > 0

    def _stop(self) -> None:
        """SIGKILL the child's process group and reap it; then wait until nothing of it runs:
        no member of its group and, sandboxed, no process of its PID namespace (killing the
        namespace's init, which bubblewrap does when its parent dies, kills them all)."""
        if self.stopped:
            return
        self.stopped = True
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        if self.cgroup is not None:
            self.cgroup.kill()
        self.process.wait()
        group, namespace = self.process.pid, self.namespace
        deadline = time.monotonic() + KILL_WAIT_S
        while time.monotonic() < deadline and _live(
            lambda pid, pgid: pgid == group or (namespace is not None and _in(pid, namespace))
        ):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, signal.SIGKILL)
            time.sleep(0.01)


TAIL_BYTES = 400


def memory_detail(limits: Limits) -> str:
    return (
        f"killed: the attempt's memory limit of {limits.memory_mb} MB "
        "(all its processes together, its cgroup) was reached"
    )


def wall_clock_detail(limits: Limits) -> str:
    return f"killed after {limits.time_s:g} s of wall-clock time"


def exit_verdict(code: int, stderr: bytes, passed: int, limits: Limits) -> Verdict:
    """Why a child that exited by itself left the verdict open, from its exit status and the
    tail of what it wrote on stderr (the attempt's text, kept short: it is data)."""
    if code in (-signal.SIGXCPU, 128 + signal.SIGXCPU):
        return Verdict(Status.TIMEOUT, passed, f"killed after {limits.cpu_s} s of CPU time")
    tail = stderr[-TAIL_BYTES:].decode("utf-8", "replace").strip()
    if "MemoryError" in tail:
        return Verdict(Status.MEMORY, passed, "MemoryError before the tests ran")
    return Verdict(Status.CRASHED, passed, f"exited without a verdict: {tail}")


def _namespace(info: bytes, known: int | None) -> int | None:
    """The sandbox's PID namespace (inode) from bubblewrap's ``--info-fd`` JSON, once whole."""
    try:
        return int(json.loads(info)["pid-namespace"])
    except (ValueError, KeyError, TypeError):
        return known


def _in(pid: str, namespace: int) -> bool:
    try:
        return os.stat(f"/proc/{pid}/ns/pid").st_ino == namespace
    except OSError:
        return False


def _live(match: Callable[[str, int], bool]) -> bool:
    """Whether a live (not zombie) process matches ``match(pid, process group)``, read from
    /proc (where there is none, the kill is trusted)."""
    if not os.path.isdir("/proc"):
        return False
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:  # gone meanwhile
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if fields[0] != "Z" and match(entry.name, int(fields[2])):
            return True
    return False
