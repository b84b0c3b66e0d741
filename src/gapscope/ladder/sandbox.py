"""Run one code attempt against its tests in an isolated, limited, killable process.

The code pilot's verifier is test execution (seed Appendix O), and the code is a model's: it
may loop forever, fork without end, allocate 10 GB or open a socket. Each attempt gets:

* a fresh interpreter (``python -I -S``: no site, no user paths) running
  :mod:`gapscope.ladder.sandbox_child`, in a private temporary directory (mode 0700, removed
  afterwards), with an environment of PATH, HOME and TMPDIR only;
* resource limits the child sets on itself before the attempt runs, soft and hard alike:
  address space (``memory_mb``), CPU seconds, file size, open files, processes, no core
  dumps; and an audit hook refusing sockets, process creation, signals, ctypes, raising the
  limits and writing outside the private directory;
* its own session (so its own process group), killed as a group with SIGKILL when the
  wall-clock limit passes;
* with bubblewrap (``bwrap``) installed, also its own network, PID, IPC and UTS namespaces, a
  read-only view of the file system with only the private directory writable (``/tmp``
  included: a fresh one would hide an interpreter or a gapscope installed below it), and
  death with its parent. Without it the audit hook is what keeps it off the
  network and from starting processes (Python-level, not a kernel boundary).

As root the kernel does not enforce the process limit (``RLIMIT_NPROC``), so there the block
on process creation is what stops a fork bomb. :func:`isolation` says which layer is in force;
every result records it.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

CHILD = Path(__file__).with_name("sandbox_child.py")


class Isolation(StrEnum):
    """The isolation layer in force: kernel namespaces (bwrap) or the audit hook alone."""

    BWRAP = "bwrap"
    AUDIT_HOOK = "audit-hook"


class Status(StrEnum):
    """How an attempt ended. Only PASSED is a solve."""

    PASSED = "passed"
    FAILED = "failed"  # ran, gave a wrong answer
    ERROR = "error"  # raised, or the program does not compile
    MEMORY = "memory"  # hit the address-space limit
    BLOCKED = "blocked"  # tried something the sandbox refuses (socket, fork, ...)
    TIMEOUT = "timeout"  # killed at the wall-clock or CPU limit
    CRASHED = "crashed"  # died without a verdict (signal, interpreter failure)


@dataclass(frozen=True)
class Limits:
    """What one attempt may use; defaults fit small programming-contest problems."""

    time_s: float = 10.0
    cpu_s: int = 10
    memory_mb: int = 1024
    processes: int = 64
    file_mb: int = 16
    open_files: int = 64
    allow_processes: bool = False
    """Let the attempt start processes (only for tests of the kill path; never for models)."""

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


@dataclass(frozen=True)
class CodeTest:
    """One test: ``input`` is stdin text (stdin tests) or the argument list (call tests)."""

    input: Any
    output: Any


@dataclass(frozen=True)
class RunResult:
    """One attempt's verdict, with the isolation it ran under."""

    status: Status
    passed: int
    total: int
    detail: str
    isolation: Isolation
    seconds: float

    @property
    def solved(self) -> bool:
        return self.status is Status.PASSED


def isolation() -> Isolation:
    """BWRAP when ``bwrap`` is installed and can start a sandbox here, else AUDIT_HOOK."""
    found = shutil.which("bwrap")
    return Isolation.BWRAP if found and _bwrap_starts(found) else Isolation.AUDIT_HOOK


@functools.cache
def _bwrap_starts(bwrap: str) -> bool:
    """Whether ``bwrap`` can start a sandbox here, probed once per process: bwrap is installed
    on machines where unprivileged user namespaces are turned off, and fails there."""
    probe = subprocess.run(
        [bwrap, *_bwrap_args(tempfile.gettempdir()), "--", "/bin/true"],
        capture_output=True,
        timeout=30,
        check=False,
    )
    return probe.returncode == 0


def _bwrap_args(workdir: str) -> list[str]:
    return [
        *("--unshare-all", "--die-with-parent", "--new-session"),
        *("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"),
        *("--bind", workdir, workdir, "--chdir", workdir),
    ]


def run_tests(
    program: str,
    tests: list[CodeTest],
    entry: str | None,
    limits: Limits = Limits(),
    layer: Isolation | None = None,
) -> RunResult:
    """Run ``program`` on ``tests`` in a fresh sandbox; stop at the first failing test.

    ``entry`` names the function call tests call (a top-level function, or a method of a
    ``Solution`` class as LiveCodeBench writes them); None means stdin/stdout tests.
    ``layer`` forces an isolation layer (default: :func:`isolation`).
    """
    layer = layer or isolation()
    started = time.monotonic()
    workdir = tempfile.mkdtemp(prefix="gapscope-code-")
    try:
        result_file = Path(workdir, f"result-{secrets.token_hex(8)}.json")
        job = {
            "program": program,
            "tests": [{"input": t.input, "output": t.output} for t in tests],
            "entry": entry,
            "limits": limits.rlimits(),
            "allow_processes": limits.allow_processes,
            "root": workdir,
            "result": str(result_file),
        }
        command = [sys.executable, "-I", "-S", str(CHILD)]
        if layer is Isolation.BWRAP:
            command = [shutil.which("bwrap") or "bwrap", *_bwrap_args(workdir), "--", *command]
        status, detail = _supervise(command, job, workdir, limits)
        passed = 0
        if status is None:
            if not result_file.is_file():
                status, detail = _no_verdict(workdir)
            else:
                verdict = json.loads(result_file.read_text(encoding="utf-8"))
                status, detail = Status(verdict["status"]), verdict["detail"]
                passed = verdict["passed"]
        return RunResult(status, passed, len(tests), detail, layer, time.monotonic() - started)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _supervise(
    command: list[str], job: dict[str, Any], workdir: str, limits: Limits
) -> tuple[Status | None, str]:
    """Run the child to its end or its deadline; None when it exited by itself.

    The job (program and tests, expected outputs included) reaches the child on its stdin from
    an unnamed temporary file, so the attempt finds no test file to read; the child swaps its
    stdin for /dev/null before the attempt runs.
    """
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": workdir, "TMPDIR": workdir}
    with tempfile.TemporaryFile("w+", encoding="utf-8") as stdin:
        json.dump(job, stdin)
        stdin.seek(0)
        with open(Path(workdir, "output.txt"), "wb") as output:
            process = subprocess.Popen(
                command,
                cwd=workdir,
                env=env,
                stdin=stdin,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            try:
                code = process.wait(timeout=limits.time_s)
            except subprocess.TimeoutExpired:
                code = None
            finally:
                _kill_group(process)
    if code is None:
        return Status.TIMEOUT, f"killed after {limits.time_s:g} s of wall-clock time"
    if code == -signal.SIGXCPU or code == 128 + signal.SIGXCPU:
        return Status.TIMEOUT, f"killed after {limits.cpu_s} s of CPU time"
    return None, ""


def _no_verdict(workdir: str) -> tuple[Status, str]:
    """Why a child that exited left no verdict, from the tail of what it printed."""
    tail = Path(workdir, "output.txt").read_bytes()[-400:].decode("utf-8", "replace").strip()
    if "MemoryError" in tail:
        return Status.MEMORY, "MemoryError before the tests ran"
    return Status.CRASHED, f"exited without a verdict: {tail}"


KILL_WAIT_S = 5.0
"""How long to wait for the killed group's members to die (SIGKILL is delivered
asynchronously; a member still running when the attempt is reported would outlive it)."""


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL the child's whole process group (its session), reap the child, and return once
    no member of the group is still running (zombies awaiting their reaper do not run)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    deadline = time.monotonic() + KILL_WAIT_S
    while _running_in_group(process.pid) and time.monotonic() < deadline:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        time.sleep(0.01)


def _running_in_group(pgid: int) -> bool:
    """Whether a live (not zombie) process of group ``pgid`` exists, read from /proc (where
    there is none, the kill is trusted)."""
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
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False
