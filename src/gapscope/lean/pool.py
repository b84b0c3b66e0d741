"""A bounded pool of REPL processes, reused per header.

Loading a header (``import Mathlib``) costs seconds to minutes, running a proof against the
loaded environment milliseconds; so a process is kept per header, the header is sent once and
its env id remembered. Processes are recycled after ``max_uses`` checks (REPL memory grows
with every command) or once their resident memory passes ``max_rss_mb``; a process that timed
out, crashed or answered garbage is killed, and the next acquire starts a fresh one. So is a
process that wrote output nobody asked for (a REPL answering twice), found when it is released
or picked again: reusing it would hand the stray answer to the next check.

Bounds (memory, processes, CPU) hold per REPL *process*, for its whole life, not per check: a
cgroup's memory is charged to the cgroup a page was allocated in and stays there when a
process moves (cgroup v1 and v2 alike), so a pooled REPL moved into a fresh cgroup per check
would carry the header's gigabytes with it uncounted, and the check's limit would bound
nothing. A check is still held: it runs in one REPL, and a REPL whose cgroup passes its
memory limit is killed (the check gets ``server_error`` naming the limit) and replaced.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from gapscope.lean.bounding import Containment
from gapscope.lean.cgroup import Bounds
from gapscope.lean.process import DEFAULT_MAX_REPLY_BYTES, ReplCrashed, ReplProcess, ReplTimeout
from gapscope.lean.protocol import ProtocolError, encode_command, parse_response


class PoolError(RuntimeError):
    """A REPL for a header could not be started; the message says why."""


@dataclass(frozen=True)
class PoolConfig:
    """How REPLs are started and when they are retired."""

    command: tuple[str, ...]
    cwd: Path | None = None
    env: Mapping[str, str] | None = None
    max_procs: int = 2
    max_uses: int = 100
    max_rss_mb: float | None = 8192.0
    header_timeout_s: float = 600.0
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES
    bounds: Bounds | None = None
    """What each REPL process may use with everything it starts (None: unbounded)."""
    containment: Containment | None = None
    """How ``bounds`` are held: a cgroup per process, or the uid it starts under."""


@dataclass
class PoolStats:
    """Counters that make pool behaviour observable (tests, benchmarks, logs)."""

    started: int = 0
    retired_uses: int = 0
    retired_memory: int = 0
    discarded: int = 0


@dataclass
class _State:
    idle: defaultdict[str, list[ReplProcess]] = field(default_factory=lambda: defaultdict(list))
    count: int = 0
    closed: bool = False


class ReplPool:
    """At most ``max_procs`` REPLs; ``acquire`` blocks while all are busy."""

    def __init__(self, config: PoolConfig) -> None:
        if config.max_procs < 1 or config.max_uses < 1:
            raise ValueError("max_procs and max_uses must be at least 1")
        self.config = config
        self.stats = PoolStats()
        self._slots = threading.BoundedSemaphore(config.max_procs)
        self._lock = threading.Lock()
        self._state = _State()

    def acquire(self, header: str, timeout_s: float | None = None) -> ReplProcess:
        """A REPL whose ``header_env`` holds ``header`` loaded; release it when done.

        A header loaded for this call waits at most ``timeout_s`` (the check's own limit) or
        ``header_timeout_s``, whichever is shorter: a REPL hanging in its imports must not
        hold a check past its timeout.
        """
        self._slots.acquire()
        victim: ReplProcess | None = None
        with self._lock:
            if self._state.closed:
                self._slots.release()
                raise PoolError("the REPL pool is closed")
            if self._state.idle[header]:
                victim = self._state.idle[header].pop()
                if not victim.has_stray_output():
                    return victim
                self.stats.discarded += 1
            elif self._state.count >= self.config.max_procs:
                # A free slot with every process alive means one idles under another header.
                other = next(h for h, repls in self._state.idle.items() if repls)
                victim = self._state.idle[other].pop()
            else:
                self._state.count += 1
        if victim is not None:
            victim.kill()
        limit = self.config.header_timeout_s
        try:
            return self._start(header, limit if timeout_s is None else min(limit, timeout_s))
        except PoolError:
            with self._lock:
                self._state.count -= 1
            self._slots.release()
            raise

    def _start(self, header: str, load_timeout_s: float) -> ReplProcess:
        config = self.config
        try:
            cgroup, user = None, {}
            if config.containment is not None and config.bounds is not None:
                cgroup = config.containment.open(config.bounds)
                user = config.containment.popen_user()
            repl = ReplProcess(
                config.command, config.cwd, config.env, config.max_reply_bytes, cgroup, user
            )
        except OSError as exc:
            raise PoolError(f"cannot start the REPL {list(config.command)}: {exc}") from None
        self.stats.started += 1
        if not header:
            return repl
        try:
            raw = repl.request(encode_command(header), load_timeout_s)
            response = parse_response(raw)
        except ReplTimeout:
            repl.kill()
            raise PoolError(f"the header did not load within {load_timeout_s} s") from None
        except (ReplCrashed, ProtocolError) as exc:
            repl.kill()
            raise PoolError(f"loading the header failed: {exc}") from None
        errors = [m.data for m in response.messages if m.severity == "error"]
        if response.error is not None or errors or response.env is None:
            repl.kill()
            why = response.error or "; ".join(errors) or "no env id in the reply"
            raise PoolError(f"the header does not elaborate: {why}")
        repl.header_env = response.env
        return repl

    def release(self, repl: ReplProcess, header: str, healthy: bool) -> None:
        """Return ``repl`` after one check; retire it if unhealthy, worn out or too big."""
        repl.uses += 1
        limit = self.config.max_rss_mb
        retire = True
        if not healthy or repl.has_stray_output():
            self.stats.discarded += 1
        elif repl.uses >= self.config.max_uses:
            self.stats.retired_uses += 1
        elif limit is not None and repl.rss_bytes() > limit * 2**20:
            self.stats.retired_memory += 1
        else:
            retire = False
        with self._lock:
            retire = retire or self._state.closed
            if retire:
                self._state.count -= 1
            else:
                self._state.idle[header].append(repl)
        if retire:
            repl.kill()
        self._slots.release()

    def close(self) -> None:
        """Kill idle REPLs now; busy ones die when released."""
        with self._lock:
            self._state.closed = True
            idle = [r for repls in self._state.idle.values() for r in repls]
            self._state.idle.clear()
            self._state.count -= len(idle)
        for repl in idle:
            repl.kill()
