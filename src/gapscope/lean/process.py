"""One Lean REPL child process with deadline-bounded, size-bounded, one-to-one I/O.

Every read and write waits with ``select`` against a deadline, so a REPL that hangs, floods or
dies can never block the caller; a reply larger than ``max_reply_bytes`` is refused
(:class:`ReplyTooLarge`) before it can exhaust memory. The child runs in its own session so
that killing it also kills what ``lake env`` started underneath it, and on Linux it gets
SIGKILL when its owner dies (``PR_SET_DEATHSIG``; inside bubblewrap ``--die-with-parent``
and the PID namespace take the whole tree down): no orphan REPL outlives a killed run. stderr
goes to a temporary file (a pipe nobody drains could fill and stall the child) and its tail is
quoted when the process crashes.

A REPL started with a cgroup (:class:`gapscope.lean.cgroup.AttemptCgroup`, one per process for
its whole life: see ``gapscope.lean.pool``) joins it before it execs, so everything it starts is
held to the cgroup's memory, process count and CPU; while an answer is awaited the cgroup is
checked for an OOM kill every :data:`POLL_S`, and a REPL touched by one is killed and reported
as a crash naming the memory limit (a ``server_error``), not left to run into the deadline.

Replies are matched to requests one to one. The REPL numbers environments in order, one per
``cmd`` or ``unpickleEnvFrom``, and answers ``pickleTo`` with the env it pickled, so the env id
of every reply is known before it arrives: a reply carrying another id (a second answer to an
earlier command, say) is an :class:`OutOfStep` error, never the next command's answer.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gapscope.lean.cgroup import AttemptCgroup
from gapscope.lean.childenv import child_environment
from gapscope.lean.protocol import ProtocolError, decode_block, expected_env


class ReplTimeout(TimeoutError):
    """The REPL did not answer before the deadline (the process is killed)."""


class ReplCrashed(RuntimeError):
    """The REPL process exited or closed its pipes."""


class ReplyTooLarge(ProtocolError):
    """The REPL's reply passed the size cap (the process is discarded)."""


class OutOfStep(ProtocolError):
    """A reply that does not answer the request just sent (the process is discarded)."""


POLL_S = 0.05
"""How often a REPL with a cgroup is checked for an OOM kill while an answer is awaited."""

DEFAULT_MAX_REPLY_BYTES = 64 * 2**20
"""Lean's messages for a proof are kilobytes; 64 MiB leaves room for huge goals, not floods."""

_PR_SET_DEATHSIG = 1


def die_with_parent() -> None:
    """In the child, before exec: ask Linux to SIGKILL this process when its parent dies.

    Linux ties the signal to the thread that forked, so REPLs are started from the backend's
    long-lived worker threads; elsewhere (no prctl) this does nothing and ``kill``/``close``
    remain the only cleanup.
    """
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_DEATHSIG, signal.SIGKILL, 0, 0, 0)


def _children(pid: int) -> list[int]:
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError):
                text = Path(f"/proc/{pid}/task/{task}/children").read_text()
                found.extend(int(x) for x in text.split())
    return found


def tree_rss_bytes(pid: int) -> int:
    """Resident memory of ``pid`` and its descendants (``lake env`` runs the REPL as a child)."""
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        todo.extend(_children(current))
    return total


class ReplProcess:
    """A started REPL: send a command object, get the decoded answer object back."""

    def __init__(
        self,
        command: Sequence[str],
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
        cgroup: AttemptCgroup | None = None,
        user: Mapping[str, Any] | None = None,
    ) -> None:
        """``cgroup``: joined before the command execs, removed by :meth:`kill`. ``user``:
        ``Popen`` arguments starting it under another uid
        (:meth:`gapscope.lean.bounding.Containment.popen_user`)."""
        self.cgroup = cgroup
        # Lives as long as the process; closed by ``kill``.
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115
        try:
            self._proc = subprocess.Popen(
                cgroup.wrap(command) if cgroup is not None else list(command),
                cwd=cwd,
                env=child_environment(env),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                bufsize=0,
                start_new_session=True,
                preexec_fn=die_with_parent,
                **(user or {}),
            )
        except OSError:
            self._stderr.close()
            if cgroup is not None:
                cgroup.remove()
            raise
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._in, self._out = self._proc.stdin.fileno(), self._proc.stdout.fileno()
        os.set_blocking(self._in, False)
        self._buffer = b""
        self._killed = False
        self._max_reply_bytes = max_reply_bytes
        self._next_env = 0
        self.uses = 0
        self.header_env: int | None = None

    @property
    def pid(self) -> int:
        return self._proc.pid

    def rss_bytes(self) -> int:
        return tree_rss_bytes(self._proc.pid)

    def request(self, payload: bytes, timeout_s: float) -> dict[str, Any]:
        """Write one framed command and read its answer, both before the deadline.

        OutOfStep if the answer's env id is not the one this command must get (see the
        module docstring); a REPL-level error (``{"message": ...}``) has none and is returned.
        """
        expected, following = expected_env(decode_block(payload.decode("utf-8")), self._next_env)
        deadline = time.monotonic() + timeout_s
        self._write(payload, deadline)
        answer = decode_block(self._read_block(deadline))
        if "env" not in answer and "message" in answer:
            return answer
        if answer.get("env") != expected:
            raise OutOfStep(
                f"the REPL answered out of step (env {answer.get('env')!r} where the request "
                f"just sent must get env {expected}): a reply to an earlier command"
            )
        self._next_env = following
        return answer

    def has_stray_output(self) -> bool:
        """Whether the REPL wrote something nobody asked for (or closed its output) since its
        last answer. Such a REPL is out of step - its next reply would be the stray one, not
        the answer to the next command - and must not be reused."""
        while select.select([self._out], [], [], 0)[0]:
            chunk = os.read(self._out, 1 << 16)
            if not chunk:
                return True
            self._buffer += chunk
        return bool(self._buffer.strip())

    def _remaining(self, deadline: float) -> float:
        left = deadline - time.monotonic()
        if left <= 0:
            raise ReplTimeout("the REPL did not answer in time")
        return left

    def _write(self, payload: bytes, deadline: float) -> None:
        view = memoryview(payload)
        while view:
            _, ready, _ = select.select([], [self._in], [], self._remaining(deadline))
            if not ready:
                continue
            try:
                view = view[os.write(self._in, view) :]
            except (BrokenPipeError, ConnectionResetError):
                raise ReplCrashed(self._crash_detail()) from None

    def _read_block(self, deadline: float) -> str:
        while True:
            # A frame ends at the first blank line after some content.
            stripped = self._buffer.lstrip(b"\r\n")
            cut = stripped.find(b"\n\n")
            if cut >= 0:
                self._buffer = stripped[cut + 2 :]
                try:
                    return stripped[:cut].decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise ProtocolError(f"REPL output is not UTF-8: {exc}") from None
            if len(self._buffer) > self._max_reply_bytes:
                raise ReplyTooLarge(
                    f"the REPL's reply passed the cap of {self._max_reply_bytes} bytes "
                    "(max_reply_bytes); REPL discarded"
                )
            wait = self._remaining(deadline)
            if self.cgroup is not None:
                wait = min(wait, POLL_S)
                if self.cgroup.oom_kills() > 0:
                    self.kill()
                    raise ReplCrashed(self._memory_detail())
            ready, _, _ = select.select([self._out], [], [], wait)
            if ready:
                chunk = os.read(self._out, 1 << 16)
                if not chunk:
                    raise ReplCrashed(self._crash_detail())
                self._buffer += chunk.replace(b"\r\n", b"\n")

    def _memory_detail(self) -> str:
        assert self.cgroup is not None
        return (
            f"killed: the REPL's memory limit of {self.cgroup.bounds.memory_mb} MB (all its "
            "processes together, its cgroup) was reached"
        )

    def _crash_detail(self) -> str:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(timeout=1.0)
        if self.cgroup is not None and self.cgroup.oom_kills() > 0:
            return self._memory_detail()
        self._stderr.seek(0, os.SEEK_END)
        size = self._stderr.tell()
        self._stderr.seek(max(0, size - 2000))
        tail = self._stderr.read().decode("utf-8", "replace").strip()
        code = self._proc.returncode
        status = "is still running" if code is None else f"exited with code {code}"
        return f"the REPL {status}" + (f"; stderr: {tail}" if tail else "")

    def kill(self) -> None:
        """Kill the whole process group and reap it; safe to call more than once."""
        if not self._killed:
            # The group outlives its leader while ``lake env``'s child runs: kill it regardless.
            self._killed = True
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._proc.pid, signal.SIGKILL)
        if self.cgroup is not None:  # what left the process group (setsid) is in the cgroup
            self.cgroup.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(timeout=5.0)
        if self.cgroup is not None:
            self.cgroup.remove()
        for stream in (self._proc.stdin, self._proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        self._stderr.close()
