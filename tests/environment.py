"""What a test needs from the machine, found when the test runs and named when it is missing.

A test that needs the shared reference data, bubblewrap or a browser asks for it here: the
check runs inside the test (never at import, where one machine's answer would be baked into
collection), and a skip says what is missing and how to get it, so ``pytest -rs`` is a list of
things to install, not of puzzles.

The shared reference data (``shared/data``, see its README) sits beside the checkout, not in
it: ``/work/shared/data`` for a worktree ``/work/wt-NAME``, ``../shared/data`` for a clone.
``$GAPSCOPE_SHARED_DATA`` names it anywhere else.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

ENV_SHARED_DATA = "GAPSCOPE_SHARED_DATA"
CHECKOUT = Path(__file__).resolve().parents[1]
INSTALL_BWRAP = (
    "install it (Debian/Ubuntu: apt-get install bubblewrap); where it is installed but cannot "
    "start, the kernel denies unprivileged user namespaces (README: 'Tests that skip')"
)


def find_shared_data() -> tuple[Path | None, str]:
    """The shared data folder and where it was looked for: ``$GAPSCOPE_SHARED_DATA`` when set
    (and then only there, so a wrong setting is not silently replaced), else the first
    ``shared/data`` folder in the checkout or any folder above it."""
    named = os.environ.get(ENV_SHARED_DATA, "").strip()
    if named:
        path = Path(named).expanduser()
        return (path if path.is_dir() else None), f"${ENV_SHARED_DATA}={named}"
    for folder in (CHECKOUT, *CHECKOUT.parents):
        candidate = folder / "shared" / "data"
        if candidate.is_dir():
            return candidate, str(candidate)
    return None, f"shared/data in {CHECKOUT} or any folder above it"


@dataclass(frozen=True)
class SharedData:
    """The located shared data; calling it with a relative path gives that file or folder,
    or skips the test naming what is missing and how to get it."""

    root: Path | None
    searched: str

    def __call__(self, relative: str) -> Path:
        if self.root is None:
            pytest.skip(
                f"shared reference data not found (looked for {self.searched}); put the "
                f"shared/data folder beside the checkout or set {ENV_SHARED_DATA}=/path/to/it"
            )
        path = self.root / relative
        if not path.exists():
            pytest.skip(
                f"{relative} is not in the shared reference data at {self.root} "
                "(its README says where each file comes from)"
            )
        return path


def require_program(*names: str, install: str) -> str:
    """The first of ``names`` on PATH; skips with ``install`` (how to get it) otherwise."""
    for name in names:
        found = shutil.which(name)
        if found is not None:
            return found
    pytest.skip(f"{' or '.join(names)} not on PATH; {install}")


def require_lean_sandbox() -> None:
    """Skip unless the Lean REPLs' bubblewrap sandbox starts here (probed by running it)."""
    from gapscope.lean.sandbox import sandbox_status

    status = sandbox_status()
    if not status.available:
        pytest.skip(f"the Lean sandbox cannot start: {status.detail}; {INSTALL_BWRAP}")


def require_code_sandbox() -> None:
    """Skip unless the OracleLadder code attempts' bubblewrap sandbox starts here."""
    from gapscope.ladder.sandbox import bwrap_status

    status = bwrap_status()
    if not status.available:
        pytest.skip(f"the code sandbox cannot start: {status.detail}; {INSTALL_BWRAP}")


def require_attempt_cgroup() -> None:
    """Skip unless attempts get a cgroup of their own here (root on cgroup v1 memory+pids, or
    a delegated cgroup v2 subtree)."""
    from gapscope.lean.cgroup import cgroup_support

    support = cgroup_support()
    if support.layout is None:
        pytest.skip(f"no cgroup per attempt here: {support.detail}")
