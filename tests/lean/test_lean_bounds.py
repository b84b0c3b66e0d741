"""A sandboxed Lean REPL is held, with everything it starts, to the bounds of its process: a
cgroup where the host offers one, else RLIMIT_NPROC under an unprivileged uid (real
bubblewrap, a fake REPL whose commands start children; skipped with the reason elsewhere)."""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

import pytest

from gapscope.lean.bounding import ENV_ATTEMPT_CGROUP, Containment, _containment
from gapscope.lean.cgroup import Bounds, CgroupLayout, CgroupSupport
from gapscope.lean.kernel import KernelChecker
from gapscope.lean.local import LocalBackend, repl_bounds
from gapscope.lean.sandbox import lean_containment
from gapscope.lean.verdict import Checker, LeanVerdict, Status
from tests.environment import require_attempt_cgroup, require_lean_sandbox
from tests.lean.test_acceptance import fake_kernel

FAKE = Path(__file__).with_name("fake_hog_repl.py")
SYSTEM_PYTHON = "/usr/bin/python3"


def _running(marker: str, wait_s: float = 5.0) -> list[int]:
    """Live processes whose command line holds ``marker``, once ``wait_s`` has passed or none
    is left (SIGKILL reaches a PID namespace's processes asynchronously)."""
    deadline = time.monotonic() + wait_s
    while (found := _scan(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def _scan(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if marker in line and state != "Z":
            found.append(int(entry.name))
    return found


def test_a_sandboxed_repl_is_held_to_its_memory_limit_with_all_its_children(
    shared_project: Path,
) -> None:
    """Four children of 400 MB: the REPL's cgroup (1,024 MB) holds their sum; the check ends
    at once as a server error naming the limit, and nothing of the REPL outlives it."""
    require_lean_sandbox()
    require_attempt_cgroup()
    command = (sys.executable, str(FAKE))
    with LocalBackend(
        shared_project, repl_command=command, sandbox=True, max_workers=1,
        kernel_checker=None, bounds=Bounds(memory_mb=1024, processes=64),
    ) as backend:  # fmt: skip
        assert re.fullmatch(
            r"per REPL \(cgroup v\d\): memory 1024 MB, 64 processes.*", backend.bounds
        )
        started = time.monotonic()
        verdict = backend.check("theorem t : True := trivial -- hogs 4 400", "", timeout_s=60.0)
        elapsed = time.monotonic() - started
    assert verdict.status is Status.SERVER_ERROR, verdict
    assert "memory limit of 1024 MB (all its processes together" in verdict.detail
    assert elapsed < 30  # stopped at the kill, not at the check's timeout
    assert verdict.bounds == backend.bounds
    assert _running("<< 20); time.sleep(600)") == []


def test_without_a_cgroup_a_repl_that_forks_without_end_is_stopped_by_rlimit_nproc(
    shared_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_lean_sandbox()
    if not os.access(SYSTEM_PYTHON, os.X_OK):
        pytest.skip(f"no {SYSTEM_PYTHON} that an unprivileged uid can run")
    monkeypatch.setenv(ENV_ATTEMPT_CGROUP, "off")
    contained = lean_containment()
    if not contained.by_rlimits:
        pytest.skip(f"no rlimits fallback here: {contained.detail}")
    with LocalBackend(
        shared_project, repl_command=(SYSTEM_PYTHON, str(FAKE)), sandbox=True, max_workers=1,
        kernel_checker=None, bounds=Bounds(memory_mb=1024, processes=32),
    ) as backend:  # fmt: skip
        expected = f"per REPL ({contained.mechanism}): 32 processes; memory not bounded per REPL"
        assert backend.bounds.startswith(expected)
        verdict = backend.check("theorem t : True := trivial -- forks 300", "", timeout_s=30.0)
    said = " ".join(m.data for m in verdict.messages)
    forked = re.search(r"forked (\d+) of 300: Resource temporarily unavailable", said)
    assert forked is not None, verdict
    assert int(forked[1]) < 32
    assert verdict.bounds == backend.bounds
    assert _running(str(FAKE)) == []


def test_as_root_the_fallback_runs_the_sandbox_as_another_uid_or_says_none() -> None:
    """The probe decides: a sandbox that starts under the uid gives ``rlimits under uid N``,
    one that does not gives ``none`` with its error; a cgroup, where offered, comes first."""
    ok, fails = ("/bin/true",), ("/bin/false",)
    root = _containment(ok, False, 4321, 0)
    assert root.mechanism == "rlimits under uid 4321" and root.run_as == 4321
    assert root.popen_user() == {"user": 4321, "group": 4321, "extra_groups": []}
    refused = _containment(fails, False, 4321, 0)
    assert refused.mechanism == "none" and "cannot start as uid 4321 (exit 1)" in refused.detail
    unsandboxed = _containment(None, False, 4321, 0)
    assert unsandboxed.mechanism == "none" and unsandboxed.popen_user() == {}
    assert _containment(fails, False, 4321, 1000).mechanism == f"rlimits under uid {os.getuid()}"


def test_each_mechanism_describes_the_limits_in_force() -> None:
    bounds = Bounds(8192, 512, 1.0)
    v1 = CgroupLayout(1, {"memory": Path("/m"), "pids": Path("/p")})
    cgroup = Containment("cgroup v1", "found", CgroupSupport(v1, "found"))
    assert cgroup.describe(bounds, "REPL") == "per REPL (cgroup v1): memory 8192 MB, 512 processes"
    rlimits = Containment("rlimits under uid 65534", "no cgroup", run_as=65534)
    assert rlimits.describe(bounds) == (
        "per attempt (rlimits under uid 65534): 512 processes; memory not bounded per attempt "
        "(no cgroup)"
    )
    assert Containment("none", "no cgroup").describe(bounds).startswith("nothing per attempt")


def test_a_repl_may_take_what_it_was_already_retired_at() -> None:
    """The hard limit is the RSS past which a REPL was retired (8 GB: import Mathlib)."""
    assert repl_bounds(8192.0) == Bounds(8192, 512, 1.0)
    assert repl_bounds(None).memory_mb == 8192


HOGS = (
    "import subprocess, sys, time\n"
    "hold = \"x = bytearray(b'1') * (400 << 20); import time; time.sleep(600)\"\n"
    "for _ in range(4): subprocess.Popen([sys.executable, '-c', hold])\n"
    "time.sleep(600)\n"
)


def test_a_sandboxed_kernel_check_is_held_to_its_memory_limit_with_all_its_builds(
    shared_project: Path,
) -> None:
    """comparator's builds start processes: four of 400 MB in one check's cgroup (1,024 MB)
    end it as a server error naming the limit, long before its timeout."""
    require_lean_sandbox()
    require_attempt_cgroup()
    checker = KernelChecker(
        Checker.COMPARATOR, (sys.executable, "-c", HOGS), "hogs", fake_kernel().env
    )
    started = time.monotonic()
    verdict = checker.check(
        shared_project, "", "theorem t : True := sorry", "theorem t : True := trivial", ["t"],
        60.0, True, (), Bounds(memory_mb=1024, processes=64),
    )  # fmt: skip
    assert verdict.status is Status.SERVER_ERROR, verdict
    assert (
        "the kernel check's memory limit of 1024 MB (all its processes together" in verdict.detail
    )
    assert verdict.checks == ("repl-text", "kernel:comparator")
    assert time.monotonic() - started < 30
    assert _running("<< 20); import time; time.sleep(600)") == []


def _root_only_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project only root may enter, with no cgroup offered: the uid fallback's hard case
    (skips where the sandbox cannot run or this is not root)."""
    require_lean_sandbox()
    if os.geteuid() != 0:
        pytest.skip("the uid fallback changes uid only as root")
    monkeypatch.setenv(ENV_ATTEMPT_CGROUP, "off")
    project = tmp_path / "private"
    project.mkdir(mode=0o700)
    return project


def test_a_repl_the_fallback_uid_cannot_reach_runs_as_before_and_says_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A project only root may enter (an elan toolchain under /root is the common case):
    starting the REPL as uid 65534 would fail every check, so it keeps this process's uid
    and its bounds say none, naming what the uid could not reach."""
    project = _root_only_project(tmp_path, monkeypatch)
    (project / "lean-toolchain").write_text("leanprover/lean4:v4.33.0-fake\n")
    with LocalBackend(
        project, repl_command=(SYSTEM_PYTHON, str(FAKE)), sandbox=True, max_workers=1,
        kernel_checker=None,
    ) as backend:  # fmt: skip
        assert backend.bounds.startswith("nothing per REPL (")
        assert "the sandbox cannot start as uid 65534" in backend.bounds  # bwrap's bind fails
        verdict = backend.check("theorem t : True := trivial -- forks 3", "", timeout_s=30.0)
    assert "forked 3 of 3" in " ".join(m.data for m in verdict.messages), verdict


FORK_LOOP = (
    "import os, sys, time\n"
    "started = 0\n"
    "for _ in range(300):\n"
    "    try:\n"
    "        pid = os.fork()\n"
    "    except OSError as exc:\n"
    "        print(f'uncaught exception: forked {started} of 300: {exc.strerror}')\n"
    "        sys.exit(1)\n"
    "    if pid == 0:\n"
    "        time.sleep(600)\n"
    "        os._exit(0)\n"
    "    started += 1\n"
    "print(f'uncaught exception: forked {started} of 300')\n"
    "sys.exit(1)\n"
)
"""A comparator whose build forks without end and says, as comparator says why it failed,
how many forks the kernel let through."""


def _forking_kernel() -> KernelChecker:
    return KernelChecker(
        Checker.COMPARATOR, (SYSTEM_PYTHON, "-c", FORK_LOOP), "forks", fake_kernel().env
    )


def _check(checker: KernelChecker, project: Path, processes: int) -> LeanVerdict:
    return checker.check(
        project, "", "theorem t : True := sorry", "theorem t : True := trivial", ["t"],
        30.0, True, (), Bounds(memory_mb=1024, processes=processes),
    )  # fmt: skip


def test_without_a_cgroup_a_kernel_check_runs_as_another_uid_so_rlimit_nproc_holds(
    shared_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As root the kernel check's sandbox starts as uid 65534 with RLIMIT_NPROC set inside
    (its scratch project handed to that uid): 300 forks stop before 32, and the verdict says
    which bounds held."""
    require_lean_sandbox()
    if not os.access(SYSTEM_PYTHON, os.X_OK):
        pytest.skip(f"no {SYSTEM_PYTHON} that an unprivileged uid can run")
    monkeypatch.setenv(ENV_ATTEMPT_CGROUP, "off")
    checker = _forking_kernel()
    contained = lean_containment(checker.run, shared_project, checker.env)
    if not contained.by_rlimits:
        pytest.skip(f"no rlimits fallback here: {contained.detail}")
    verdict = _check(checker, shared_project, 32)
    forked = re.search(r"forked (\d+) of 300: Resource temporarily unavailable", verdict.detail)
    assert forked is not None, verdict
    assert int(forked[1]) < 32
    expected = f"per kernel check ({contained.mechanism}): 32 processes; memory not bounded"
    assert verdict.bounds is not None and verdict.bounds.startswith(expected)
    assert _running("os._exit(0)") == []


def test_a_kernel_check_the_fallback_uid_cannot_reach_says_why_in_its_bounds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A workspace only root may enter: the check keeps this process's uid (as a REPL does),
    the fork loop is not held, and the verdict's bounds say so and why."""
    project = _root_only_project(tmp_path, monkeypatch)
    verdict = _check(_forking_kernel(), project, 32)
    assert verdict.bounds is not None and verdict.bounds.startswith("nothing per kernel check (")
    assert "the sandbox cannot start as uid 65534" in verdict.bounds
    assert "processes unbounded as root" in verdict.bounds
    assert "forked 300 of 300" in verdict.detail, verdict
    assert _running("os._exit(0)") == []
