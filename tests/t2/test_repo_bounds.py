"""T2's repository track holds every ``lake`` call, with all it starts, to a REPL's bounds:
a cgroup per call where the host offers one, else RLIMIT_NPROC under an unprivileged uid
(real bubblewrap and a fake ``lake`` whose builds take memory or fork; skipped with the reason
elsewhere)."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gapscope.app.main import app
from gapscope.lean import Run
from gapscope.lean.bounding import ENV_ATTEMPT_CGROUP
from gapscope.lean.cgroup import Bounds, cgroup_support
from gapscope.lean.sandbox import lean_containment
from gapscope.t2.evaluate import SampleOutcome, SampleResult
from gapscope.t2.extract import extract_answer
from gapscope.t2.repo import RepoConfig, Workspaces, evaluate_in_repo, file_in
from gapscope.t2.successors import target_identity
from tests.environment import require_attempt_cgroup, require_lean_sandbox
from tests.lean.test_lean_bounds import SYSTEM_PYTHON, _running
from tests.t2.test_repo import BASE, TARGET, USER, _record

FAKE_LAKE = Path(__file__).with_name("fake_lake.py")


@pytest.fixture
def shared_repo() -> Iterator[Path]:
    """A project any uid can read (pytest's tmp_path is root's alone)."""
    root = Path(tempfile.mkdtemp(prefix="gapscope-repo-bounds-"))
    root.chmod(0o755)
    (root / "Lib").mkdir()
    (root / "lakefile.lean").write_text("-- fake project\n")
    (root / "Lib" / "Base.lean").write_text(BASE)
    (root / "Lib" / "User.lean").write_text(USER)
    yield root
    shutil.rmtree(root)


def _workspaces(root: Path, python: str, bounds: Bounds) -> Workspaces:
    lake = (python, str(FAKE_LAKE))
    return Workspaces(RepoConfig(root, lake=lake, workers=1, sandbox=True, bounds=bounds))


def _counted_lake_calls(workspaces: Workspaces, monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The first two arguments of every ``lake`` call ``workspaces`` makes, as they start."""
    calls: list[list[str]] = []
    run_lake = workspaces.run_lake

    def counted(project: Path, args: Sequence[str], *rest: Any) -> Run:
        calls.append(list(args[:2]))
        return run_lake(project, args, *rest)

    monkeypatch.setattr(workspaces, "run_lake", counted)
    return calls


def _evaluate(workspaces: Workspaces, code: str) -> SampleResult:
    record = _record()
    answer = extract_answer(f"```lean\n{code}\n```", target_identity(record))
    return evaluate_in_repo(record, answer, workspaces)


MEMORY_LIMIT = (
    "killed: the lake call's memory limit of 1024 MB (all its processes together, its "
    "cgroup) was reached"
)
CONTROL_BUILT = "; the original's build of the same modules did not reach it (control)"


def test_an_answer_whose_build_takes_more_than_its_memory_limit_fails_naming_it(
    shared_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Four children of 400 MB under 1,024 MB: killed at once; the original builds under the
    same bounds (the control, built once for the run), so it is the answer's failure
    (broke_check, in every denominator) naming the limit; the copy restored (the next answer
    builds), nothing of the build left."""
    require_lean_sandbox()
    require_attempt_cgroup()
    workspaces = _workspaces(shared_repo, sys.executable, Bounds(memory_mb=1024, processes=64))
    calls = _counted_lake_calls(workspaces, monkeypatch)
    try:
        started = time.monotonic()
        hogging = _evaluate(workspaces, f"{TARGET} -- fake-hogs 4 400")
        elapsed = time.monotonic() - started
        again = _evaluate(workspaces, f"{TARGET} -- fake-hogs 4 400")
        honest = _evaluate(workspaces, TARGET)
    finally:
        workspaces.close()
    assert hogging.outcome == SampleOutcome.BROKE_CHECK, hogging
    assert hogging.detail == MEMORY_LIMIT + CONTROL_BUILT
    assert (hogging.ta, hogging.compiles, hogging.selftest) == (False, False, False)
    assert again == hogging
    # compile stopped, the control's build; then compile stopped; then the honest answer's two
    assert calls == [["env", "lean"], ["build", "Lib.Base"]] + [["env", "lean"]] * 2 + [
        ["build", "Lib.Base"]
    ]
    assert re.fullmatch(
        r"per lake call \(cgroup v\d\): memory 1024 MB, 64 processes.*", hogging.bounds or ""
    )
    assert elapsed < 30  # stopped at the kill, not at the build's timeout (1,200 s)
    assert _running("<< 20); time.sleep(600)") == []
    assert honest.outcome == SampleOutcome.CHECKED and honest.ta, honest
    assert honest.bounds == hogging.bounds
    assert (shared_repo / "Lib" / "Base.lean").read_text() == BASE


OUTPUT_LIMIT = (
    "killed: the lake call's output limit of 64 MB (all it printed, a file on this host's "
    "disk) was reached"
)


def test_a_build_printing_1_gb_is_stopped_at_its_output_limit(shared_repo: Path) -> None:
    """A theorem whose elaboration prints 1 GB (512 MB before its diagnostics, 512 after) and
    keeps trying past the cap under a 64 MB output limit: the file on this host's disk stops
    at 64 MB exactly (RLIMIT_FSIZE), the run is killed there, not at the build's timeout,
    and names the limit; the original's build stays under it (the control), so the answer
    fails (broke_check). Whatever holds the run here (a cgroup or not), the cap holds."""
    require_lean_sandbox()
    bounds = Bounds(memory_mb=1024, processes=64, output_mb=64)
    workspaces = _workspaces(shared_repo, sys.executable, bounds)
    record = _record()
    try:
        with (
            workspaces.project(record) as project,
            workspaces.substituted(file_in(project, record)) as (original, write),
        ):
            write(original.replace(TARGET, f"{TARGET} -- fake-flood 512"))
            started = time.monotonic()
            flooded = workspaces.run_lake(project, ("build", "Lib.Base"), 600.0)
            elapsed = time.monotonic() - started
        result = _evaluate(workspaces, f"{TARGET} -- fake-flood 512")
    finally:
        workspaces.close()
    assert flooded.output_bytes == 64 << 20, flooded.output_bytes  # not a byte past the cap
    assert flooded.code is None  # killed: its writer would have tried until the timeout
    assert elapsed < 60
    assert workspaces.held.exceeded(flooded) == OUTPUT_LIMIT
    assert result.outcome == SampleOutcome.BROKE_CHECK, result
    assert result.detail == OUTPUT_LIMIT + CONTROL_BUILT
    assert _running(str(FAKE_LAKE)) == []
    assert (shared_repo / "Lib" / "Base.lean").read_text() == BASE


def test_a_build_forking_without_end_is_stopped_at_its_process_limit(shared_repo: Path) -> None:
    require_lean_sandbox()
    require_attempt_cgroup()
    workspaces = _workspaces(shared_repo, sys.executable, Bounds(memory_mb=1024, processes=32))
    try:
        result = _evaluate(workspaces, f"{TARGET} -- fake-forks 300")
    finally:
        workspaces.close()
    assert result.outcome == SampleOutcome.BROKE_CHECK, result
    assert result.detail == (
        "killed: the lake call's limit of 32 processes (all its processes and threads "
        "together, its cgroup) was reached" + CONTROL_BUILT
    )


def test_a_limit_the_original_build_reaches_too_stays_a_server_error(shared_repo: Path) -> None:
    """A dependent module of the project itself takes 1.6 GB: the answer's build and the
    control both stop at 1,024 MB, so the machine cannot judge it and the sample is left
    out (server_error), naming both."""
    require_lean_sandbox()
    require_attempt_cgroup()
    user = shared_repo / "Lib" / "User.lean"
    user.write_text(USER + "-- fake-hogs 4 400\n")
    workspaces = _workspaces(shared_repo, sys.executable, Bounds(memory_mb=1024, processes=64))
    try:
        result = _evaluate(workspaces, TARGET)
    finally:
        workspaces.close()
    assert result.outcome == SampleOutcome.SERVER_ERROR, result
    assert result.detail == (
        f"{MEMORY_LIMIT}; the control (the original's build) was stopped too: {MEMORY_LIMIT}"
    )
    assert _running("<< 20); time.sleep(600)") == []
    assert (shared_repo / "Lib" / "Base.lean").read_text() == BASE
    assert _running(str(FAKE_LAKE)) == []


def test_without_a_cgroup_lake_runs_as_another_uid_and_rlimit_nproc_stops_a_fork_loop(
    shared_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As root the sandbox starts as uid 65534 (so the kernel enforces RLIMIT_NPROC), the
    worker's copy handed to it: the build still writes there, and 300 forks stop before 32."""
    require_lean_sandbox()
    if not os.access(SYSTEM_PYTHON, os.X_OK):
        pytest.skip(f"no {SYSTEM_PYTHON} that an unprivileged uid can run")
    monkeypatch.setenv(ENV_ATTEMPT_CGROUP, "off")
    contained = lean_containment((SYSTEM_PYTHON, str(FAKE_LAKE)), shared_repo)
    if not contained.by_rlimits:
        pytest.skip(f"no rlimits fallback here: {contained.detail}")
    workspaces = _workspaces(shared_repo, SYSTEM_PYTHON, Bounds(memory_mb=1024, processes=32))
    record = _record()
    try:
        expected = f"per lake call ({contained.mechanism}): 32 processes; memory not bounded"
        assert workspaces.bounds.startswith(expected)
        honest = _evaluate(workspaces, TARGET)
        with workspaces.project(record) as project:
            built = (project / ".lake" / "fake-build").read_text()
            with workspaces.substituted(file_in(project, record)) as (original, write):
                write(original.replace(TARGET, f"{TARGET} -- fake-forks 300"))
                forked = workspaces.run_lake(project, ("build", "Lib.Base"), 60.0)
    finally:
        workspaces.close()
    assert honest.outcome == SampleOutcome.CHECKED and honest.ta, honest
    assert honest.bounds == workspaces.bounds
    assert built.split() == ["Lib.Base", "Lib.User"]  # written by the sandbox's uid
    count = re.search(r"forked (\d+) of 300: Resource temporarily unavailable", forked.output)
    assert count is not None, forked
    assert int(count[1]) < 32
    assert _running(str(FAKE_LAKE)) == []


def test_gapscope_doctor_says_what_holds_a_lake_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cgroup per call where one is offered; without one the fallback, or nothing and why."""
    require_lean_sandbox()

    def finding() -> dict[str, Any]:
        result = CliRunner().invoke(app, ["doctor", "--json"])
        assert result.exit_code == 0, result.output
        found = {f["name"]: f for f in json.loads(result.stdout)["details"]}
        return found["T2 lake build limits (defaults)"]

    if cgroup_support().layout is not None:
        held = finding()
        assert held["ok"] and re.fullmatch(
            r"per lake call \(cgroup v\d\): memory 8192 MB, 512 processes.*", held["found"]
        )
    monkeypatch.setenv(ENV_ATTEMPT_CGROUP, "off")
    fallback = finding()
    mechanism = fallback["data"]["mechanism"]
    assert not fallback["ok"] and "cgroup" in fallback["fix"]
    if mechanism.startswith("rlimits"):
        assert fallback["found"].startswith(f"per lake call ({mechanism}): 512 processes;")
    else:
        assert fallback["found"].startswith("nothing per lake call (no cgroup per attempt")
