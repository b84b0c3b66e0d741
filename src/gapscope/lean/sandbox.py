"""Run local Lean REPLs inside a bubblewrap sandbox: no network, nothing writable but /tmp.

The command screen (``gapscope.lean.screen``) keeps ``#eval`` and friends out of model output,
but a filter is never complete: an imported library can add commands, and Lean's
metaprogramming is rich. So the REPL that elaborates model-written code runs under Debian's
``bubblewrap`` (``bwrap``) when it is installed: every namespace unshared (no network, its own
PIDs), the whole filesystem mounted read-only, a private in-memory ``/tmp`` (``TMPDIR``), and
the process killed with its parent. The Lean project, and any program or file the command
names that lives under ``/tmp`` (a virtualenv in a checkout under ``/tmp``, say), are mounted
read-only again after the ``/tmp`` mount, so they stay visible. Files stay readable: the sandbox
stops damage and exfiltration over the network, not reading (see docs/lean.md).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

BWRAP = "bwrap"
INSTALL_HINT = "apt-get install bubblewrap (Debian/Ubuntu) to run Lean sandboxed"


def _under_tmp(command: Sequence[str], root: str) -> list[str]:
    """The top folders under ``/tmp`` that the command's program, its absolute arguments or
    the project live in: hidden by the private ``/tmp`` unless mounted again."""
    tmp = Path("/tmp")
    program = (shutil.which(command[0]) or command[0]) if command else ""
    paths = [root, program, *command[1:]]
    tops: dict[str, None] = {}
    for text in paths:
        if not text or not text.startswith("/"):
            continue
        path = Path(text)
        if path.is_relative_to(tmp) and path != tmp and path.exists():
            tops[str(tmp / path.relative_to(tmp).parts[0])] = None
    return list(tops)


def sandbox_argv(command: Sequence[str], project: Path, bwrap: str = BWRAP) -> list[str]:
    """``command`` wrapped to run sandboxed with ``project`` as its working directory."""
    root = str(Path(project).resolve())
    tops = _under_tmp(command, root)
    visible = [arg for path in (*tops, root) for arg in ("--ro-bind", path, path)]
    return [
        bwrap,
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        "--tmpfs", "/tmp",
        *visible,
        "--unshare-all",
        "--die-with-parent",
        "--setenv", "TMPDIR", "/tmp",
        "--chdir", root,
        "--",
        *command,
    ]  # fmt: skip


@dataclass(frozen=True)
class SandboxStatus:
    """Whether REPLs can run sandboxed here, and what was found (or what is missing)."""

    available: bool
    detail: str


@cache
def sandbox_status() -> SandboxStatus:
    """Whether ``bwrap`` is installed and can build the sandbox here (it needs user
    namespaces, which some containers deny): probed once by sandboxing ``true``."""
    path = shutil.which(BWRAP)
    if path is None:
        return SandboxStatus(False, "bubblewrap (bwrap) not found")
    try:
        done = subprocess.run(
            sandbox_argv(["true"], Path("/"), path), capture_output=True, text=True, timeout=20
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return SandboxStatus(False, f"{path} cannot run: {exc}")
    if done.returncode != 0:
        return SandboxStatus(False, f"{path} cannot build the sandbox: {done.stderr.strip()}")
    return SandboxStatus(True, f"{path}: no network, read-only filesystem, private /tmp")
