"""Every program the self-test starts is held as in a run: the compiles (``lake env lean``), the
tracer probe's ``lake`` calls and the kernel checker each get the backend's bounds, and a limit
that stops one fails its result naming the limit (real bubblewrap and cgroups; a ``lake`` and a
comparator that take 4 x 400 MB; skipped with the reason elsewhere)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gapscope.lean.cgroup import Bounds
from gapscope.lean.kernel import KernelChecker
from gapscope.lean.local import LocalBackend
from gapscope.lean.selftest import Case
from gapscope.lean.selftest.programs import COMPILE_PATH, PROBE_PATH, shipped_programs
from gapscope.lean.selftest.runner import run_selftest
from gapscope.lean.verdict import Checker
from gapscope.t2.mining.probe import TRACER_PROBE
from tests.environment import require_attempt_cgroup, require_lean_sandbox
from tests.lean.test_acceptance import fake_kernel
from tests.lean.test_lean_bounds import FAKE, HOGS, _running

MEMORY_LIMIT = "memory limit of 1024 MB (all its processes together, its cgroup) was reached"


@pytest.fixture
def hogging_lake(shared_project: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A ``lake`` first on PATH whose every call starts 4 children of 400 MB."""
    bin_dir = shared_project / "bin"
    bin_dir.mkdir()
    (bin_dir / "hogs.py").write_text(HOGS)
    lake = bin_dir / "lake"
    lake.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{bin_dir / "hogs.py"}"\n')
    lake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{fake_kernel().env['PATH']}")
    yield


def test_every_program_the_selftest_starts_is_held_to_the_backends_bounds(
    shared_project: Path, hogging_lake: None
) -> None:
    require_lean_sandbox()
    require_attempt_cgroup()
    comparator = KernelChecker(
        Checker.COMPARATOR, (sys.executable, "-c", HOGS), "hogs", fake_kernel().env
    )
    case = Case(
        "honest", "theorem", "theorem t : True := trivial", "valid",
        challenge="theorem t : True := sorry", required=("t",),
    )  # fmt: skip
    with LocalBackend(
        shared_project, repl_command=(sys.executable, str(FAKE)), sandbox=True, max_workers=1,
        kernel_checker=comparator, bounds=Bounds(memory_mb=1024, processes=64),
    ) as backend:  # fmt: skip
        result = run_selftest(backend, [case], timeout_s=60.0, probes=[TRACER_PROBE])
    by_path = {(r.path, r.case): r for r in result.results}
    assert not result.passed
    for name in shipped_programs():
        compiled = by_path[(COMPILE_PATH, name)]
        assert (compiled.status, compiled.ok) == ("server_error", False), compiled
        assert compiled.detail == f"{name}: killed: the lake call's {MEMORY_LIMIT}"
    probe = by_path[(PROBE_PATH, TRACER_PROBE.name)]
    assert probe.ok is False and f"the lake call's {MEMORY_LIMIT}" in probe.detail, probe
    kernel = by_path[("kernel:comparator", "honest")]
    assert kernel.status == "server_error" and kernel.ok is False, kernel
    assert kernel.detail == f"killed: the kernel check's {MEMORY_LIMIT}"
    assert _running("<< 20); import time; time.sleep(600)") == []
