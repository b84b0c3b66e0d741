"""A cgroup per attempt: the memory, processes and CPU of everything an attempt starts, together.

Resource limits (``setrlimit``) hold per process: an attempt that starts three children under
``RLIMIT_AS`` of 1,024 MB holds 4 GB, and as root the kernel does not enforce ``RLIMIT_NPROC``
at all. A cgroup counts every process the attempt starts, however it starts them (a renamed
``_posixsubprocess``, ``setsid``, a double fork), and the kernel's OOM killer acts inside it
when the sum passes ``memory``; ``pids`` caps their number, ``cpu`` their share of the CPUs.

Where a cgroup can be made is probed, not assumed (:func:`cgroup_support`): cgroup v2 where the
unified hierarchy this process sits in is writable and hands the memory and pids controllers to
children; else the v1 ``memory`` and ``pids`` hierarchies (hybrid hosts, as root); else none,
which ``gapscope doctor`` and every score say. The attempt's command joins its cgroups before it
execs (:meth:`AttemptCgroup.wrap`, a two-line ``sh`` prologue), so nothing it starts runs
outside them.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gapscope.lean.output import MAX_RUN_OUTPUT_MB

__all__ = ["AttemptCgroup", "Bounds", "CgroupLayout", "CgroupSupport", "cgroup_support"]

MB = 1024 * 1024
CPU_PERIOD_US = 100_000
JOIN = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'
REMOVE_WAIT_S = 5.0
_names = itertools.count()


@dataclass(frozen=True)
class Bounds:
    """What one attempt may use, all its processes together."""

    memory_mb: int
    processes: int
    cpus: float = 1.0
    output_mb: int = MAX_RUN_OUTPUT_MB
    """The most a run started afresh (a ``lake`` call, a kernel check) may print, kept in a
    file on this host (:mod:`gapscope.lean.output`); not a cgroup's, and unused by a pooled
    REPL (its replies come through a pipe, capped apart) and a code attempt (``Limits``)."""


@dataclass(frozen=True)
class CgroupLayout:
    """Where attempt cgroups are made: v2, one folder for every controller; v1, one folder
    per controller hierarchy (``memory``, ``pids`` and, where mounted, ``cpu``)."""

    version: int
    parents: dict[str, Path] = field(default_factory=dict)

    @classmethod
    def find(cls, membership: str, mounts: str) -> CgroupLayout | None:
        """The layout from ``/proc/self/cgroup`` (``membership``) and ``/proc/self/mounts``;
        None where neither a v2 hierarchy nor v1 ``memory`` and ``pids`` are mounted. A new
        cgroup goes under this process's own, so whatever holds this process holds it too."""
        own = {}  # controller ("" for v2) -> this process's cgroup path
        for line in membership.splitlines():
            _, controllers, path = line.split(":", 2)
            for name in controllers.split(",") if controllers else [""]:
                own[name] = path.lstrip("/")
        v1: dict[str, Path] = {}
        unified = None
        for line in mounts.splitlines():
            parts = line.split()
            if len(parts) < 4:
                continue
            point, kind, options = parts[1], parts[2], parts[3].split(",")
            if kind == "cgroup2" and "" in own:
                unified = Path(point, own[""])
            elif kind == "cgroup":
                for name in ("memory", "pids", "cpu"):
                    if name in options and name in own:
                        v1[name] = Path(point, own[name])
        if unified is not None and _offers(unified, ("memory", "pids")):
            return cls(2, {"": unified})
        if "memory" in v1 and "pids" in v1:
            return cls(1, v1)
        return None

    def terms(self, bounds: Bounds, unit: str = "attempt") -> str:
        """What a cgroup made here holds, each ``unit`` (an attempt, a REPL) with all it starts."""
        cpu = f", {bounds.cpus:g} CPU" if self.version == 2 or "cpu" in self.parents else ""
        return (
            f"per {unit} (cgroup v{self.version}): memory {bounds.memory_mb} MB, "
            f"{bounds.processes} processes{cpu}"
        )

    def describe(self) -> str:
        if self.version == 2:
            return f"cgroup v2 under {self.parents['']}"
        return f"cgroup v1 ({', '.join(sorted(self.parents))}) under {self.parents['memory']}"


def _offers(folder: Path, controllers: Sequence[str]) -> bool:
    """Whether children of ``folder`` get ``controllers``, enabling them where they are not
    (which the kernel refuses where this cgroup is not delegated to us)."""
    control = folder / "cgroup.subtree_control"
    try:
        enabled = control.read_text().split()
        missing = [c for c in controllers if c not in enabled]
        if missing:
            control.write_text(" ".join(f"+{c}" for c in missing))
        return True
    except OSError:
        return False


class AttemptCgroup:
    """One attempt's cgroup(s): made with its bounds, joined by the attempt's command, watched
    for OOM kills, and killed and removed with everything in it."""

    def __init__(self, layout: CgroupLayout, bounds: Bounds) -> None:
        self.layout, self.bounds = layout, bounds
        name = f"gapscope-{os.getpid()}-{next(_names)}"
        self.folders = {c: parent / name for c, parent in layout.parents.items()}
        try:
            for folder in self.folders.values():
                folder.mkdir()
            self._write_bounds()
        except OSError:
            self.remove()
            raise

    def _write_bounds(self) -> None:
        memory, processes = self.bounds.memory_mb * MB, self.bounds.processes
        quota = max(1000, int(self.bounds.cpus * CPU_PERIOD_US))
        if self.layout.version == 2:
            folder = self.folders[""]
            _write(folder / "memory.max", memory)
            _write(folder / "memory.swap.max", 0, optional=True)
            _write(folder / "memory.oom.group", 1, optional=True)
            _write(folder / "pids.max", processes)
            _write(folder / "cpu.max", f"{quota} {CPU_PERIOD_US}", optional=True)
            return
        _write(self.folders["memory"] / "memory.limit_in_bytes", memory)
        _write(self.folders["memory"] / "memory.memsw.limit_in_bytes", memory, optional=True)
        _write(self.folders["pids"] / "pids.max", processes)
        if "cpu" in self.folders:
            _write(self.folders["cpu"] / "cpu.cfs_period_us", CPU_PERIOD_US, optional=True)
            _write(self.folders["cpu"] / "cpu.cfs_quota_us", quota, optional=True)

    def wrap(self, command: Sequence[str]) -> list[str]:
        """``command``, joining this cgroup before it execs (exit 125 where it
        cannot: the attempt then never ran)."""
        procs = [str(folder / "cgroup.procs") for folder in self.folders.values()]
        return ["/bin/sh", "-c", JOIN, "gapscope-cgroup", *procs, "--", *command]

    def oom_kills(self) -> int:
        """How many of the attempt's processes the kernel killed for passing ``memory``."""
        folder = self.folders["" if self.layout.version == 2 else "memory"]
        events = "memory.events" if self.layout.version == 2 else "memory.oom_control"
        try:
            lines = (folder / events).read_text().splitlines()
        except OSError:
            return 0
        counts = dict(line.split(None, 1) for line in lines if " " in line)
        return int(counts.get("oom_kill", "0"))

    def process_limit_hits(self) -> int:
        """How many times a fork of the attempt's was refused for passing ``processes``
        (``pids.events``, v1 and v2 alike: nothing is killed there, the fork fails)."""
        folder = self.folders["" if self.layout.version == 2 else "pids"]
        try:
            lines = (folder / "pids.events").read_text().splitlines()
        except OSError:
            return 0
        counts = dict(line.split(None, 1) for line in lines if " " in line)
        return int(counts.get("max", "0"))

    def pids(self) -> set[int]:
        found: set[int] = set()
        for folder in self.folders.values():
            with contextlib.suppress(OSError):
                found |= {int(p) for p in (folder / "cgroup.procs").read_text().split()}
        return found

    def kill(self) -> None:
        """SIGKILL everything in the cgroup and wait (at most :data:`REMOVE_WAIT_S`) until it
        is empty: v2 in one write (``cgroup.kill``); v1 one process at a time, again until none
        is left (``pids`` bounds how many a fork loop can add meanwhile)."""
        if self.layout.version == 2:
            _write(self.folders[""] / "cgroup.kill", 1, optional=True)
        deadline = time.monotonic() + REMOVE_WAIT_S
        while (left := self.pids()) and time.monotonic() < deadline:
            for pid in left:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)

    def remove(self) -> None:
        """Kill what is left and remove the folders (an empty cgroup is removed with rmdir)."""
        self.kill()
        for folder in self.folders.values():
            deadline = time.monotonic() + REMOVE_WAIT_S
            while folder.exists():
                try:
                    folder.rmdir()
                except OSError:
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.01)

    def describe(self) -> str:
        return self.layout.terms(self.bounds)


def _write(path: Path, value: object, optional: bool = False) -> None:
    try:
        path.write_text(str(value))
    except OSError:
        if not optional:
            raise


@dataclass(frozen=True)
class CgroupSupport:
    """Whether attempts get a cgroup here, and where (or why not)."""

    layout: CgroupLayout | None
    detail: str

    def open(self, bounds: Bounds) -> AttemptCgroup | None:
        """A fresh cgroup for one attempt; None where cgroups are not offered here."""
        return AttemptCgroup(self.layout, bounds) if self.layout is not None else None


@functools.cache
def cgroup_support() -> CgroupSupport:
    """Probed once: a cgroup is made, bounded and removed where the layout says one can be."""
    try:
        layout = CgroupLayout.find(
            Path("/proc/self/cgroup").read_text(), Path("/proc/self/mounts").read_text()
        )
    except OSError as exc:
        return CgroupSupport(None, f"cgroups unreadable here ({exc})")
    if layout is None:
        return CgroupSupport(None, "no writable cgroup v2 with memory+pids, nor v1 memory+pids")
    try:
        AttemptCgroup(layout, Bounds(64, 8)).remove()
    except OSError as exc:
        return CgroupSupport(None, f"{layout.describe()} is not writable here ({exc})")
    return CgroupSupport(layout, layout.describe())
