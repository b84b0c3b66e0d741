"""Without a cgroup, a code attempt's processes are still bounded together: as root the
sandbox starts as an unprivileged uid, so the child's RLIMIT_NPROC holds (real bubblewrap)."""

from __future__ import annotations

import os
import sys

import pytest

from gapscope.ladder import sandbox
from gapscope.ladder.sandbox import CodeTest, Isolation, Limits, run_tests
from gapscope.lean import ENV_ATTEMPT_CGROUP
from tests.environment import require_code_sandbox
from tests.ladder.test_code import _processes_running

SYSTEM_PYTHON = "/usr/bin/python3"
FORKS = """
import errno, os, time
started = 0
try:
    for _ in range(300):
        if os.fork() == 0:
            time.sleep(987.5)
            os._exit(0)
        started += 1
    print("unbounded")
except OSError as exc:
    print("refused early" if exc.errno == errno.EAGAIN and started < 16 else f"{exc} {started}")
"""


def test_without_a_cgroup_an_attempt_that_forks_without_end_is_stopped_by_rlimit_nproc(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The attempt may start processes (as one past the audit hook could); 300 forks under
    a process limit of 16 stop at the limit, and the result names the mechanism."""
    require_code_sandbox()
    monkeypatch.setenv(ENV_ATTEMPT_CGROUP, "off")
    if os.geteuid() == 0 and os.path.realpath(sys.executable).startswith("/root/"):
        # uid 65534 cannot reach an interpreter under /root: use the system's (same stdlib
        # API; the child imports nothing else)
        system = os.path.realpath(SYSTEM_PYTHON)
        if not os.access(system, os.X_OK):
            pytest.skip(f"the interpreter is under /root and there is no {SYSTEM_PYTHON}")
        monkeypatch.setattr(sandbox, "_interpreter", lambda: system)
        monkeypatch.setattr(sys, "base_prefix", "/usr")
    contained = sandbox.attempt_containment(Isolation.BWRAP)
    if not contained.by_rlimits:
        pytest.skip(f"no rlimits fallback here: {contained.detail}")
    limits = Limits(time_s=20.0, processes=16, allow_processes=True)
    result = run_tests(FORKS, [CodeTest("", "refused early\n")], None, limits)
    assert result.solved, result  # fork refused (EAGAIN) before the 16th process
    assert result.bounds.startswith(f"per attempt ({contained.mechanism}): 16 processes")
    assert list(_processes_running("987.5")) == []
