"""Which kernel judge a workspace gets (``gapscope lean setup``) and when it is used."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from gapscope.lean.bounding import ENV_ATTEMPT_CGROUP
from gapscope.lean.cgroup import cgroup_support
from gapscope.lean.doctor import kernel_checker_finding
from gapscope.lean.factory import open_backend
from gapscope.lean.kernel import (
    COMPARATOR_BINARY,
    COMPARATOR_REV,
    LEAN4EXPORT_BINARY,
    LEAN4EXPORT_REV,
    find_kernel_checker,
)
from gapscope.lean.local import LocalBackend
from gapscope.lean.verdict import Checker
from gapscope.lean.workspace import MATHLIB_REV, next_steps, workspace_files, write_workspace
from tests.environment import require_lean_sandbox


@pytest.fixture
def lake_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("lake", "landrun"):
        (bin_dir / tool).write_text("#!/bin/sh\nexit 0\n")
        (bin_dir / tool).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("COMPARATOR_LANDRUN", raising=False)
    return bin_dir


def _build_comparator(ws: Path) -> None:
    for relative in (COMPARATOR_BINARY, LEAN4EXPORT_BINARY):
        (ws / relative).parent.mkdir(parents=True, exist_ok=True)
        (ws / relative).write_text("")
    manifest = f'{{"packages": [{{"name": "Comparator", "rev": "{COMPARATOR_REV}"}}]}}'
    (ws / "lake-manifest.json").write_text(manifest)


def test_the_default_workspace_pins_comparator_and_lean4export_outside_the_default_targets() -> (
    None
):
    files = workspace_files(libraries={"Peano": "-- nng"})
    lakefile = files["lakefile.toml"]
    assert f'rev = "{COMPARATOR_REV}"' in lakefile and f'rev = "{LEAN4EXPORT_REV}"' in lakefile
    assert 'defaultTargets = ["Peano"]' in lakefile  # a checker that fails cannot break it
    assert "mathlib" not in lakefile
    steps = next_steps(Path("/ws"), have_elan=True)
    assert "lake build Comparator/comparator lean4export/lean4export" in steps
    assert steps.index("gapscope lean selftest /ws") < len(steps) - 1  # then the doctor


def test_mathlib_is_pinned_where_the_workspace_uses_it() -> None:
    lakefile = workspace_files(mathlib=True)["lakefile.toml"]
    assert f'rev = "{MATHLIB_REV}"' in lakefile and "mathlib4" in lakefile


@pytest.mark.parametrize("checker", ["safeverify", "gapscope"])
def test_checkers_without_a_v4_33_build_are_refused_with_the_reason(checker: str) -> None:
    with pytest.raises(ValueError, match=f"--checker {checker}: .*comparator"):
        workspace_files(checker=checker)
    bare = workspace_files(checker="none")["lakefile.toml"]
    assert "comparator" not in bare and "GapscopeCheck" not in bare


def test_comparator_is_used_only_when_it_and_what_it_needs_are_built(
    tmp_path: Path, lake_on_path: Path
) -> None:
    ws = tmp_path / "ws"
    write_workspace(ws)
    assert find_kernel_checker(ws) is None
    finding = kernel_checker_finding(ws)
    assert not finding.ok and "comparator" in finding.found and "repl-text" in finding.found
    _build_comparator(ws)
    checker = find_kernel_checker(ws)
    assert checker is not None and checker.name is Checker.COMPARATOR
    assert checker.revision == COMPARATOR_REV and checker.label == "kernel:comparator"
    assert checker.env["COMPARATOR_LEAN4EXPORT"].endswith("lean4export")
    assert kernel_checker_finding(ws).ok
    (lake_on_path / "landrun").unlink()
    assert find_kernel_checker(ws) is None
    assert "landrun" in kernel_checker_finding(ws).found


def test_without_lake_there_is_no_kernel_checker_and_the_doctor_says_what_that_means(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "")
    assert find_kernel_checker(tmp_path) is None
    finding = kernel_checker_finding(tmp_path)
    assert not finding.ok and "repl-text" in finding.found and "lake" in finding.found


def test_the_kernel_checker_can_be_turned_off_from_the_environment(
    tmp_path: Path, lake_on_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.lean.conftest import FAKE_REPL

    _build_comparator(tmp_path)
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


def test_each_check_gets_a_project_laid_out_as_comparators_runner_lays_one_out(
    tmp_path: Path,
) -> None:
    from gapscope.lean.kernel import judge_files

    ws = tmp_path / "ws"
    write_workspace(ws, libraries={"GapscopeNNG": "-- the library"})
    (ws / "GapscopeNNG").mkdir()
    (ws / "GapscopeNNG" / "Sub.lean").write_text("-- a submodule")
    files = judge_files(
        ws, "import GapscopeNNG", "theorem t : True := sorry", "theorem t : True := trivial",
        tmp_path / "judge",
    )  # fmt: skip
    assert files["lean-toolchain"] == (ws / "lean-toolchain").read_text()  # never elan's default
    assert files["GapscopeNNG.lean"] == "-- the library"
    assert files["GapscopeNNG/Sub.lean"] == "-- a submodule"
    lakefile = files["lakefile.toml"]
    assert "require" not in lakefile  # no package in the manifest: nothing to require
    for lib in ("GapscopeChallenge", "GapscopeSolution", "GapscopeNNG"):
        assert f'name = "{lib}"' in lakefile
    assert files["GapscopeSolution.lean"].startswith("import GapscopeNNG\n\ntheorem t : True")


def test_another_landrun_binary_voids_the_self_test_pass(
    tmp_path: Path, lake_on_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """landrun is comparator's sandbox: the bytes run are part of what a pass certifies."""
    from gapscope.lean.selftest.record import InstallationKey, passed, save_record

    ws = tmp_path / "ws"
    write_workspace(ws)
    _build_comparator(ws)

    def key() -> InstallationKey:
        checker = find_kernel_checker(ws)
        assert checker is not None
        return InstallationKey("v4", "repl", ("repl-text", checker.identity), "src")

    save_record(ws, key(), {"passed": True})
    assert passed(ws, key())
    (lake_on_path / "landrun").write_text("#!/bin/sh\nexit 0 # rebuilt\n")
    assert not passed(ws, key())  # same path, other bytes
    save_record(ws, key(), {"passed": True})
    other = tmp_path / "elsewhere-landrun"
    other.write_bytes((lake_on_path / "landrun").read_bytes())
    monkeypatch.setenv("COMPARATOR_LANDRUN", str(other))
    assert not passed(ws, key())  # same bytes, another file named by the environment
    checker = find_kernel_checker(ws)
    assert checker is not None and checker.env["COMPARATOR_LANDRUN"] == str(other.resolve())


def test_setup_pins_landrun_to_a_release_commit() -> None:
    from gapscope.lean.kernel import LANDRUN_REV

    (step,) = [s for s in next_steps(Path("/ws"), have_elan=True) if "landrun" in s]
    assert step.startswith(f"go install github.com/zouuup/landrun/cmd/landrun@{LANDRUN_REV} ")
    assert len(LANDRUN_REV) == 40 and "@main" not in step


def test_the_doctor_says_what_holds_a_kernel_check_or_why_nothing_does(
    tmp_path: Path, lake_on_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Probed with comparator's own command and workspace: a cgroup per check where one is
    offered; without one, as root, a workspace only root may enter keeps root, and the doctor
    says that nothing bounds the check's processes, and why."""
    require_lean_sandbox()
    ws = tmp_path / "ws"
    write_workspace(ws)
    _build_comparator(ws)
    if cgroup_support().layout is not None:
        expected = r"per kernel check \(cgroup v\d\): memory 8192 MB, 512 processes"
        assert re.search(expected, kernel_checker_finding(ws).found)
    if os.geteuid() != 0:
        return
    monkeypatch.setenv(ENV_ATTEMPT_CGROUP, "off")
    found = kernel_checker_finding(ws).found
    assert "nothing per kernel check (no cgroup per attempt" in found
    assert "the sandbox cannot start as uid 65534" in found
    assert "processes unbounded as root" in found
