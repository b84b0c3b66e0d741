"""The bubblewrap sandbox: the argv, the choice a backend makes, the doctor line, and (where
bwrap works) that a sandboxed process has no network and cannot write outside /tmp."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gapscope.app.lean import lean_app
from gapscope.lean import sandbox
from gapscope.lean.backend import CheckRequest, LeanUnavailable
from gapscope.lean.factory import open_backend
from gapscope.lean.local import LocalBackend
from gapscope.lean.sandbox import (
    SANDBOX_TMP_MB,
    SandboxStatus,
    SandboxUnavailable,
    sandbox_argv,
)
from gapscope.lean.verdict import Checker, Status
from tests.environment import require_lean_sandbox
from tests.lean.conftest import FAKE_REPL

MISSING = SandboxStatus(False, "bubblewrap (bwrap) not found")
WORKING = SandboxStatus(
    True, "/usr/bin/bwrap: no network, read-only filesystem and /dev, private /tmp"
)


def test_writable_folders_are_bound_after_every_read_only_mount(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    argv = sandbox_argv(["lake", "build"], tmp_path, writable=(scratch,))
    text = " ".join(argv)
    assert f"--bind {scratch} {scratch}" in text
    assert text.index(f"--ro-bind {tmp_path} {tmp_path}") < text.index(f"--bind {scratch}")
    assert text.count("--bind ") == 1  # nothing else is writable


def test_argv_unshares_everything_and_mounts_read_only(tmp_path: Path) -> None:
    argv = sandbox_argv(["lake", "env", "repl"], tmp_path)
    assert argv[0] == "bwrap" and argv[-4:] == ["--", "lake", "env", "repl"]
    text = " ".join(argv)
    assert "--unshare-all" in argv and "--share-net" not in argv  # no network
    assert "--ro-bind / /" in text and "--bind " not in text  # nothing writable ...
    assert text.index("--tmpfs /tmp") < text.index(f"--ro-bind {tmp_path} {tmp_path}")
    assert "--die-with-parent" in argv and f"--chdir {tmp_path}" in text


def test_a_program_under_tmp_stays_visible_in_the_sandbox(tmp_path: Path) -> None:
    # A checkout (and its virtualenv) under /tmp would be hidden by the private /tmp: CI
    # clones there. Its top folder is mounted read-only again after the tmpfs.
    program = tmp_path / "venv" / "python"
    program.parent.mkdir()
    program.write_text("")
    argv = sandbox_argv([str(program), "-m", "repl"], Path("/"))
    text = " ".join(argv)
    top = Path("/tmp") / program.relative_to("/tmp").parts[0]
    assert text.index("--tmpfs /tmp") < text.index(f"--ro-bind {top} {top}")


def _fake_status(monkeypatch: pytest.MonkeyPatch, status: SandboxStatus) -> None:
    monkeypatch.setattr(sandbox, "sandbox_status", lambda: status)


def test_backend_wraps_the_command_when_the_sandbox_works(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_status(monkeypatch, WORKING)
    with LocalBackend(project, repl_command=["repl"]) as backend:
        assert backend.sandboxed
        assert backend.pool.config.command[0] == "bwrap"
        assert backend.pool.config.command[-2:] == ("--", "repl")
    with LocalBackend(
        project, repl_command=["repl"], sandbox=False, allow_unsandboxed=True
    ) as backend:
        assert not backend.sandboxed and backend.pool.config.command == ("repl",)


def test_backend_without_bwrap_refuses_to_start_and_names_the_fix(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: without bubblewrap the REPLs silently ran unsandboxed."""
    _fake_status(monkeypatch, MISSING)
    with pytest.raises(SandboxUnavailable) as refused:
        LocalBackend(project, repl_command=["repl"])
    assert "apt-get install bubblewrap" in str(refused.value)
    assert "allow_unsandboxed" in str(refused.value)
    assert isinstance(refused.value, LeanUnavailable)  # reported like any missing Lean
    with pytest.raises(ValueError, match="allow_unsandboxed"):
        LocalBackend(project, repl_command=["repl"], sandbox=False)
    with pytest.raises(SandboxUnavailable):  # insisting on a sandbox beats the opt-out
        LocalBackend(project, repl_command=["repl"], sandbox=True, allow_unsandboxed=True)


def test_allowed_unsandboxed_runs_and_says_so_in_the_log_and_the_verdict(
    project: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    _fake_status(monkeypatch, MISSING)
    with LocalBackend(
        project, repl_command=(sys.executable, str(FAKE_REPL)), allow_unsandboxed=True
    ) as backend:
        assert not backend.sandboxed
        verdict = backend.check("theorem t : True := trivial")
    assert verdict.valid and verdict.sandboxed is False
    assert "WITHOUT a sandbox" in caplog.text and "allow_unsandboxed" in caplog.text


def test_factory_passes_the_opt_out_to_a_local_backend(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_status(monkeypatch, MISSING)
    monkeypatch.setenv("GAPSCOPE_LEAN_REPL_CMD", f"{sys.executable} {FAKE_REPL}")
    with pytest.raises(SandboxUnavailable):
        open_backend(f"local:{project}")
    with open_backend(f"local:{project}", allow_unsandboxed=True) as backend:
        assert isinstance(backend, LocalBackend) and not backend.sandboxed


@pytest.mark.parametrize(("status", "word"), [(WORKING, "ok"), (MISSING, "missing")])
def test_doctor_says_whether_the_sandbox_is_available(
    monkeypatch: pytest.MonkeyPatch, status: SandboxStatus, word: str
) -> None:
    monkeypatch.setattr("gapscope.lean.doctor.sandbox_status", lambda: status)
    monkeypatch.delenv("GAPSCOPE_LEAN", raising=False)
    result = CliRunner().invoke(lean_app, ["doctor"])
    assert result.exit_code == 0
    line = next(x for x in result.output.splitlines() if " sandbox:" in x)
    assert line.split()[0] == word and status.detail in line
    assert ("apt-get install bubblewrap" in result.output) is (not status.available)


@pytest.fixture
def needs_bwrap() -> None:
    """Skip (when the test runs, not at import) unless the Lean sandbox starts here."""
    require_lean_sandbox()


PROBE = """
import socket, sys
from pathlib import Path
outcome = []
for target in (Path(sys.argv[1]) / "escaped", Path(sys.argv[3])):
    try:
        target.write_text("x")
        outcome.append("wrote")
    except OSError:
        outcome.append("denied")
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[2])), timeout=2).close()
    outcome.append("connected")
except OSError:
    outcome.append("no-network")
print(" ".join(outcome))
"""


@pytest.mark.usefixtures("needs_bwrap")
def test_sandboxed_process_cannot_write_outside_tmp_nor_reach_the_network(
    project: Path,
) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    inside = Path("/tmp") / f"gapscope-sandbox-probe-{os.getpid()}"
    try:
        probe = [sys.executable, "-c", PROBE, str(project), str(port), str(inside)]
        argv = sandbox_argv(probe, project)
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    finally:
        listener.close()
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["denied", "wrote", "no-network"]
    assert not (project / "escaped").exists() and not inside.exists()  # /tmp was private


@pytest.mark.usefixtures("needs_bwrap")
def test_the_sandboxed_code_cannot_put_100_mb_under_dev(project: Path) -> None:
    """bubblewrap's private /dev is a tmpfs of half the host's memory unless remounted
    read-only; /dev/null still takes writes (a device, not a file of the mount)."""
    fill = "dd if=/dev/zero of={} bs=1M count=100 2>/dev/null && echo wrote || echo refused"
    shell = "; ".join(fill.format(path) for path in ("/dev/fill", "/dev/shm/fill"))
    shell += "; echo x > /dev/null && echo devnull"
    done = subprocess.run(
        sandbox_argv(["/bin/sh", "-c", shell], project),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.split() == ["refused", "refused", "devnull"], done.stderr


@pytest.mark.usefixtures("needs_bwrap")
def test_the_sandboxed_code_cannot_put_100_mb_more_than_its_cap_under_tmp(project: Path) -> None:
    """The private /tmp is a tmpfs of SANDBOX_TMP_MB: without ``--size`` it takes half the
    host's memory, and under the uid fallback no cgroup counts what is written there."""
    count = SANDBOX_TMP_MB + 100
    shell = (
        f"dd if=/dev/zero of=/tmp/fill bs=1M count={count} 2>/dev/null && echo wrote"
        " || echo refused; wc -c < /tmp/fill"
    )
    done = subprocess.run(
        sandbox_argv(["/bin/sh", "-c", shell], project),
        capture_output=True,
        text=True,
        timeout=60,
    )
    answer, size = done.stdout.split()
    assert answer == "refused", done.stderr
    assert int(size) <= SANDBOX_TMP_MB << 20


@pytest.mark.usefixtures("needs_bwrap")
def test_fake_repl_checks_and_times_out_inside_the_sandbox(project: Path) -> None:
    with LocalBackend(
        project, repl_command=(sys.executable, str(FAKE_REPL)), sandbox=True, max_workers=1
    ) as backend:
        assert backend.sandboxed
        assert backend.check("theorem t : True := trivial", header="import X").valid
        slow = backend.check("theorem u : True := trivial -- fake:timeout", "import X", 0.5)
        assert slow.status is Status.TIMEOUT
        assert backend.check("theorem v : True := trivial", header="import X").valid


@pytest.mark.usefixtures("needs_bwrap")
def test_the_acceptance_check_and_the_kernel_checker_work_inside_the_sandbox(
    project: Path,
) -> None:
    from tests.lean.test_acceptance import ATTACKS, CHALLENGE, HONEST, NAMES, fake_kernel

    with LocalBackend(
        project,
        repl_command=(sys.executable, str(FAKE_REPL)),
        max_workers=1,
        kernel_checker=fake_kernel(),
    ) as backend:
        assert backend.sandboxed
        honest, attack = backend.check_many(
            [
                CheckRequest(HONEST, "import Mathlib", 20.0, NAMES, CHALLENGE),
                CheckRequest(ATTACKS["namespace-restatement-plus-root-true"], "import Mathlib",
                             20.0, NAMES, CHALLENGE),
            ]
        )  # fmt: skip
    assert honest.status is Status.VALID and honest.checker is Checker.COMPARATOR, honest
    assert honest.sandboxed is True
    assert attack.status is Status.MISSING_DECLARATION
