"""Which mechanism holds a sandboxed attempt's processes together here, and how it is applied.

A cgroup per attempt (:mod:`gapscope.lean.cgroup`) bounds memory, processes and CPU of
everything an attempt starts. Where none can be made (no delegated cgroup v2, not root on v1,
or ``GAPSCOPE_ATTEMPT_CGROUP=off``), ``RLIMIT_NPROC`` is the one bound on the number of
processes that still holds the attempt as a whole - but only for a user the kernel enforces it
on: root is exempt (``copy_process`` skips the check for ``INIT_USER``), and so is a sandbox
bubblewrap builds as root, because its user namespace maps the sandbox's uid (``--uid N``)
back to root outside (measured here: under ``bwrap --unshare-user --uid 65534`` started as root,
60 forks of 60 went through an ``RLIMIT_NPROC`` of 20). So as root the fallback starts
bubblewrap itself as an unprivileged uid (:data:`ATTEMPT_UID`, 65534 "nobody" unless
``GAPSCOPE_ATTEMPT_UID`` names another): its user namespace then maps to that uid, the limit
is counted in it (per user namespace on Linux 5.14 and later, so per attempt), and the same
fork loop was refused at 18 of 20. Started as another user, that user's uid already is one.

The uid must reach everything the sandbox mounts (the interpreter, a Lean toolchain): where
it cannot, the probe that starts the very sandbox under it fails, and the mechanism is
"none", with the reason. ``gapscope doctor``, ``gapscope lean doctor`` and every score name
the mechanism in force: "cgroup v2", "cgroup v1", "rlimits under uid N" or "none".
"""

from __future__ import annotations

import functools
import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gapscope.lean.cgroup import AttemptCgroup, Bounds, CgroupSupport, cgroup_support

__all__ = [
    "ATTEMPT_UID",
    "CGROUP_FIX",
    "ENV_ATTEMPT_CGROUP",
    "ENV_ATTEMPT_UID",
    "Containment",
    "containment",
]

ENV_ATTEMPT_CGROUP = "GAPSCOPE_ATTEMPT_CGROUP"
"""``off`` forces the fallback (no cgroup per attempt even where one could be made); ``auto``
or unset uses a cgroup where the host offers one."""
ENV_ATTEMPT_UID = "GAPSCOPE_ATTEMPT_UID"
"""The uid a root process starts sandboxes under when no cgroup is made (default 65534)."""
ATTEMPT_UID = 65534
CGROUP_FIX = (
    "run as root where cgroup v1 memory and pids are mounted, or in a cgroup v2 subtree "
    "delegated to you with the memory and pids controllers (e.g. systemd-run --user --scope "
    "-p Delegate=yes gapscope ...)"
)
"""How to get a cgroup per attempt, for the doctors."""
PROBE_TIMEOUT_S = 30


@dataclass(frozen=True)
class Containment:
    """How the processes of one attempt are held together here (:func:`containment`)."""

    mechanism: str
    """``cgroup v2``, ``cgroup v1``, ``rlimits under uid N`` or ``none``."""
    detail: str
    """Why this mechanism and not a stronger one (the cgroup probe's finding)."""
    cgroups: CgroupSupport | None = None
    run_as: int | None = None
    """The uid bubblewrap is started under (root only; None: this process's own)."""

    @property
    def by_rlimits(self) -> bool:
        return self.mechanism.startswith("rlimits")

    def open(self, bounds: Bounds) -> AttemptCgroup | None:
        """A fresh cgroup for one attempt; None where the mechanism is not a cgroup."""
        return self.cgroups.open(bounds) if self.cgroups is not None else None

    def describe(self, bounds: Bounds, unit: str = "attempt") -> str:
        """The limits in force for each ``unit`` (an attempt, a REPL) with all it starts."""
        if self.cgroups is not None and self.cgroups.layout is not None:
            return self.cgroups.layout.terms(bounds, unit)
        if self.by_rlimits:
            return (
                f"per {unit} ({self.mechanism}): {bounds.processes} processes; memory not "
                f"bounded per {unit} ({self.detail})"
            )
        root = "; processes unbounded as root" if os.geteuid() == 0 else ""
        return f"nothing per {unit} ({self.detail}){root}"

    def popen_user(self) -> dict[str, Any]:
        """``subprocess.Popen`` arguments starting the sandbox under :attr:`run_as` (no
        supplementary groups: root's would keep root's group access)."""
        if self.run_as is None:
            return {}
        return {"user": self.run_as, "group": self.run_as, "extra_groups": []}


def cgroup_wanted() -> bool:
    """``$GAPSCOPE_ATTEMPT_CGROUP``: ``off`` (False), ``auto``/unset (True)."""
    choice = os.environ.get(ENV_ATTEMPT_CGROUP, "auto").strip().lower()
    if choice not in ("auto", "off"):
        raise ValueError(f"{ENV_ATTEMPT_CGROUP} must be auto or off, got {choice!r}")
    return choice == "auto"


def attempt_uid() -> int:
    """``$GAPSCOPE_ATTEMPT_UID`` (default :data:`ATTEMPT_UID`): a uid other than root's."""
    text = os.environ.get(ENV_ATTEMPT_UID, str(ATTEMPT_UID)).strip()
    if not text.isdigit() or int(text) == 0:
        raise ValueError(f"{ENV_ATTEMPT_UID} must be a uid other than 0, got {text!r}")
    return int(text)


def containment(probe: Sequence[str] | None) -> Containment:
    """The strongest mechanism that works here for the sandbox ``probe`` starts (a command
    that builds it and exits 0; None: the attempt runs unsandboxed): a cgroup; else, as root,
    ``probe`` under an unprivileged uid; else this user's own uid. Probed once per ``probe``
    and setting."""
    key = tuple(probe) if probe is not None else None
    return _containment(key, cgroup_wanted(), attempt_uid(), os.geteuid())


@functools.cache
def _containment(
    probe: tuple[str, ...] | None, want_cgroup: bool, uid: int, euid: int
) -> Containment:
    if want_cgroup:
        support = cgroup_support()
        if support.layout is not None:
            return Containment(f"cgroup v{support.layout.version}", support.detail, support)
        why = support.detail
    else:
        why = f"no cgroup per attempt ({ENV_ATTEMPT_CGROUP}=off)"
    if euid != 0:
        return Containment(f"rlimits under uid {os.getuid()}", why)
    if probe is None:
        return Containment("none", f"{why}; unsandboxed, nothing starts it as another uid")
    fallback = Containment(f"rlimits under uid {uid}", why, run_as=uid)
    try:
        done = subprocess.run(
            probe,
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
            env={},
            **fallback.popen_user(),
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return Containment("none", f"{why}; the sandbox cannot start as uid {uid}: {exc}")
    if done.returncode != 0:
        error = done.stderr.strip()[-300:] or f"exit {done.returncode}"
        return Containment(
            "none",
            f"{why}; the sandbox cannot start as uid {uid} ({error}): make what it mounts "
            f"readable to that uid, or name another in {ENV_ATTEMPT_UID}",
        )
    return fallback
