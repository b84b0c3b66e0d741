"""The self-test certifies bytes: the program behind an unchanged path, swapped, is untested."""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gapscope.app.main import app
from gapscope.lean import binaries
from gapscope.lean.factory import open_backend
from gapscope.lean.local import LocalBackend
from gapscope.lean.selftest import SelfTestRequired
from gapscope.lean.selftest.record import InstallationKey
from gapscope.lean.selftest.runner import run_selftest
from tests.lean.conftest import FAKE_REPL
from tests.lean.test_selftest import FAKE_CASES, gated

pytestmark = pytest.mark.usefixtures(gated.__name__)


@pytest.fixture
def repl_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A REPL program at a path of its own (it runs the fake REPL), named by
    ``GAPSCOPE_LEAN_REPL_CMD`` as a user's REPL command would be."""
    copy = tmp_path / "repl" / "repl.py"
    copy.parent.mkdir()
    copy.write_text(f"import runpy\nrunpy.run_path({str(FAKE_REPL)!r}, run_name='__main__')\n")
    monkeypatch.setenv("GAPSCOPE_LEAN_REPL_CMD", f"{sys.executable} {copy}")
    return copy


def _pass_selftest(project: Path, repl: Path) -> None:
    with LocalBackend(
        project, repl_command=(sys.executable, str(repl)), sandbox=False, allow_unsandboxed=True,
        kernel_checker=None,
    ) as backend:  # fmt: skip
        assert run_selftest(backend, FAKE_CASES, timeout_s=10.0).passed


def test_a_repl_swapped_behind_the_same_path_is_refused(project: Path, repl_copy: Path) -> None:
    _pass_selftest(project, repl_copy)
    with open_backend(f"local:{project}") as opened:
        assert isinstance(opened, LocalBackend) and opened.selftest
        repl_before = dict(opened.installation.binaries)["repl"]
    assert hashlib.sha256(repl_copy.read_bytes()).hexdigest() in repl_before
    repl_copy.write_text(repl_copy.read_text() + "\n# rebuilt: rewrites sorry\n")  # same path
    with pytest.raises(SelfTestRequired, match="has not been run"):
        open_backend(f"local:{project}")


def test_the_doctor_lists_the_hashes_the_selftest_key_holds(project: Path, repl_copy: Path) -> None:
    _pass_selftest(project, repl_copy)
    result = CliRunner().invoke(app, ["lean", "doctor", "--project", str(project), "--json"])
    findings = {f["name"]: f for f in json.loads(result.stdout)["details"]}
    selftest = findings["selftest"]
    assert selftest["ok"], selftest
    held = dict(selftest["data"]["binaries"])
    assert held["repl"].endswith(hashlib.sha256(repl_copy.read_bytes()).hexdigest())
    assert {"repl", "lean", "lean --version", "lake"} <= set(held)
    assert held["lake"].startswith(str(Path(shutil.which("lake") or "").resolve()) + "#")
    assert selftest["data"]["sandboxed"] is False


def test_a_pass_obtained_unsandboxed_does_not_certify_sandboxed_runs() -> None:
    unsandboxed = InstallationKey("v4", "repl", ("repl-text",), "src", (), False)
    sandboxed = InstallationKey("v4", "repl", ("repl-text",), "src", (), True)
    assert unsandboxed.digest != sandboxed.digest


def test_a_file_is_hashed_again_only_when_it_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program = tmp_path / "lean"
    program.write_bytes(b"one")
    first = binaries.file_sha256(program)
    assert first == hashlib.sha256(b"one").hexdigest()

    def no_reading(*_: object) -> None:
        raise AssertionError("an unchanged file was read again")

    monkeypatch.setattr(binaries.hashlib, "sha256", no_reading)
    assert binaries.file_sha256(program) == first  # path, inode, size, mtime unchanged
    monkeypatch.undo()
    program.write_bytes(b"two, rebuilt")
    assert binaries.file_sha256(program) == hashlib.sha256(b"two, rebuilt").hexdigest()
