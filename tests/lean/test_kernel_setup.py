"""Which kernel checker a workspace gets (``gapscope lean setup``) and which one is used."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from gapscope.lean.doctor import kernel_checker_finding
from gapscope.lean.factory import open_backend
from gapscope.lean.kernel import checker_source, find_kernel_checker
from gapscope.lean.local import LocalBackend
from gapscope.lean.verdict import Checker
from gapscope.lean.workspace import next_steps, workspace_files, write_workspace


@pytest.fixture
def lake_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "lake").write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "lake").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")


def test_the_default_workspace_builds_gapscopes_checker_outside_the_default_targets() -> None:
    files = workspace_files(libraries={"Peano": "-- nng"})
    assert files["GapscopeCheck.lean"] == checker_source().read_text(encoding="utf-8")
    lakefile = files["lakefile.toml"]
    assert 'name = "gapscope_check"' in lakefile and 'root = "GapscopeCheck"' in lakefile
    assert 'defaultTargets = ["Peano"]' in lakefile  # a checker that fails cannot break it
    assert "lake build gapscope_check" in next_steps(Path("/ws"), have_elan=True)


def test_safeverify_or_no_checker_can_be_chosen() -> None:
    safe = workspace_files(checker="safeverify", safeverify_rev="v4.33")
    assert (
        "GasStationManager/SafeVerify" in safe["lakefile.toml"] and "GapscopeCheck.lean" not in safe
    )
    assert 'rev = "v4.33"' in safe["lakefile.toml"]
    assert "lake build SafeVerify/safe_verify" in next_steps(Path("/ws"), True, "safeverify")
    bare = workspace_files(checker="none")
    assert (
        "gapscope_check" not in bare["lakefile.toml"] and "SafeVerify" not in bare["lakefile.toml"]
    )
    with pytest.raises(ValueError, match="checker must be one of"):
        workspace_files(checker="lean4checker")


def test_the_checker_found_prefers_safeverify_then_a_built_gapscope_checker(
    tmp_path: Path, lake_on_path: None
) -> None:
    write_workspace(tmp_path / "ws")
    ws = tmp_path / "ws"
    interpreted = find_kernel_checker(ws)
    assert interpreted is not None and interpreted.name is Checker.GAPSCOPE
    assert interpreted.run[-2:] == ("--run", str(checker_source()))
    built = ws / ".lake" / "build" / "bin" / "gapscope_check"
    built.parent.mkdir(parents=True)
    built.write_text("")
    compiled = find_kernel_checker(ws)
    assert compiled is not None and compiled.run == ("lake", "env", str(built))
    safe = ws / ".lake" / "packages" / "SafeVerify" / ".lake" / "build" / "bin" / "safe_verify"
    safe.parent.mkdir(parents=True)
    safe.write_text("")
    chosen = find_kernel_checker(ws)
    assert chosen is not None and chosen.name is Checker.SAFEVERIFY
    finding = kernel_checker_finding(ws)
    assert finding.ok and finding.found.startswith("safeverify")


def test_without_lake_there_is_no_kernel_checker_and_the_doctor_says_what_that_means(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "")
    assert find_kernel_checker(tmp_path) is None
    finding = kernel_checker_finding(tmp_path)
    assert not finding.ok and "repl-text" in finding.found and "elan" in finding.fix


def test_the_kernel_checker_can_be_turned_off_from_the_environment(
    tmp_path: Path, lake_on_path: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.lean.conftest import FAKE_REPL

    monkeypatch.setenv("GAPSCOPE_LEAN_REPL_CMD", f"{sys.executable} {FAKE_REPL}")
    spec = f"local:{tmp_path}"
    with open_backend(spec, allow_unsandboxed=True, sandbox=False) as found:
        assert isinstance(found, LocalBackend) and found.kernel is not None
    monkeypatch.setenv("GAPSCOPE_LEAN_KERNEL_CHECKER", "none")
    with open_backend(spec, allow_unsandboxed=True, sandbox=False) as alone:
        assert isinstance(alone, LocalBackend) and alone.kernel is None
    monkeypatch.setenv("GAPSCOPE_LEAN_KERNEL_CHECKER", "nanoda")
    with pytest.raises(ValueError, match="GAPSCOPE_LEAN_KERNEL_CHECKER"):
        open_backend(spec, allow_unsandboxed=True, sandbox=False)
