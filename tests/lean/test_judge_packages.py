"""The judge project finds the workspace's packages as comparator's sandboxed build sees them.

comparator runs ``lake build`` under landrun with only ``PATH``, ``HOME`` and
``LEAN_ABORT_ON_PANIC`` passed (``Main.lean`` ``safeLakeBuild`` at 5d21b89), so a header's
``import Mathlib`` resolves only through the judge project's own ``require``s and manifest.
The fakes (``fake_landrun``, ``fake_lake``, ``fake_lean4export``, ``fake_comparator``) keep
those contracts; the judge that found Mathlib through ``LEAN_PATH`` fails these tests.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gapscope.lean import doctor, kernel
from gapscope.lean.bounded import Run
from gapscope.lean.childenv import ENV_PASS
from gapscope.lean.kernel import KernelChecker, find_kernel_checker, judge_files, rejection
from gapscope.lean.packages import judge_requires
from gapscope.lean.sandbox import SandboxStatus
from gapscope.lean.verdict import Status
from gapscope.lean.workspace import next_steps, write_workspace
from tests.lean.fake_tools import install_fake_tools

CHALLENGE = "theorem amc_t (a : ℕ) (h : a = 2) : a + a = 4 := sorry"  # noqa: RUF001
HONEST = "theorem amc_t (a : ℕ) (h : a = 2) : a + a = 4 := by\n  subst h\n  norm_num"  # noqa: RUF001


def _git(name: str, inherited: bool) -> dict[str, object]:
    return {"type": "git", "scope": "leanprover-community", "name": name, "inherited": inherited,
            "url": f"https://github.com/x/{name}", "rev": "0" * 40,
            "manifestFile": "lake-manifest.json", "configFile": "lakefile.toml"}  # fmt: skip


def _built_package(ws: Path, name: str, module: str, source: str, requires: str = "") -> None:
    root = ws / ".lake" / "packages" / name
    olean = root / ".lake" / "build" / "lib" / "lean" / f"{module}.olean"
    olean.parent.mkdir(parents=True)
    olean.write_text(source, encoding="utf-8")
    (root / "lakefile.toml").write_text(f'name = "{name}"\n{requires}', encoding="utf-8")


@pytest.fixture
def mathlib_ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace that built Mathlib (and the batteries it requires) and comparator."""
    ws = tmp_path / "ws"
    write_workspace(ws, mathlib=True)
    manifest = {"version": 7, "name": "gapscope_lean", "lakeDir": ".lake",
                "packagesDir": ".lake/packages",
                "packages": [_git("REPL", False), _git("mathlib", False),
                             _git("batteries", True), _git("Comparator", False),
                             _git("lean4export", False)]}  # fmt: skip
    (ws / "lake-manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    _built_package(ws, "batteries", "Batteries", "-- batteries")
    requires = '\n[[require]]\nname = "batteries"\ngit = "https://github.com/x/batteries"\n'
    _built_package(ws, "mathlib", "Mathlib", "import Batteries\n", requires)
    bin_dir = tmp_path / "bin"
    install_fake_tools(bin_dir, ws)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("COMPARATOR_LANDRUN", raising=False)
    monkeypatch.setenv("FAKE_LANDRUN_LOG", str(tmp_path / "landrun.jsonl"))
    monkeypatch.setenv(ENV_PASS, "FAKE_LANDRUN_LOG")  # comparator's children get an allow-list
    monkeypatch.setenv("LEAN_PATH", str(ws / ".lake/packages/mathlib/.lake/build/lib/lean"))
    return ws


def _checker(ws: Path) -> KernelChecker:
    checker = find_kernel_checker(ws)
    assert checker is not None
    return checker


def test_a_mathlib_header_check_reaches_valid_through_comparator(
    mathlib_ws: Path, tmp_path: Path
) -> None:
    verdict = _checker(mathlib_ws).check(
        mathlib_ws, "import Mathlib", CHALLENGE, HONEST, ("amc_t",), 60.0, sandboxed=False
    )
    assert verdict.status is Status.VALID, verdict.detail
    runs = [json.loads(line) for line in (tmp_path / "landrun.jsonl").read_text().splitlines()]
    builds = [r for r in runs if r[-3:-1] == ["lake", "build"]]
    assert [b[-1] for b in builds] == ["GapscopeChallenge", "GapscopeSolution"]  # challenge first
    passed = {builds[0][i + 1] for i, arg in enumerate(builds[0]) if arg == "--env"}
    assert passed == {"PATH", "HOME", "LEAN_ABORT_ON_PANIC"}  # and nothing else reached lake


def test_a_sorry_under_the_mathlib_header_is_the_models_failure_not_the_servers(
    mathlib_ws: Path,
) -> None:
    verdict = _checker(mathlib_ws).check(
        mathlib_ws, "import Mathlib", CHALLENGE, CHALLENGE, ("amc_t",), 60.0, sandboxed=False
    )
    assert verdict.status is Status.SORRY and "sorryAx" in verdict.detail


def test_a_package_the_workspace_never_built_is_a_server_error(mathlib_ws: Path) -> None:
    verdict = _checker(mathlib_ws).check(
        mathlib_ws, "import Aesop", CHALLENGE, HONEST, ("amc_t",), 60.0, sandboxed=False
    )
    assert verdict.status is Status.SERVER_ERROR and "Child exited with 1" in verdict.detail


def test_the_judge_requires_libraries_not_tools_and_locks_every_package_by_path(
    mathlib_ws: Path, tmp_path: Path
) -> None:
    judge = tmp_path / "judge"
    files = judge_files(mathlib_ws, "import Mathlib", CHALLENGE, HONEST, judge)
    lakefile = files["lakefile.toml"]
    assert 'name = "mathlib"\npath = "../ws/.lake/packages/mathlib"' in lakefile
    assert "REPL" not in lakefile and "Comparator" not in lakefile
    manifest = json.loads(files["lake-manifest.json"])
    entries = {e["name"]: e for e in manifest["packages"]}
    assert set(entries) == {"mathlib", "batteries"}
    assert {e["type"] for e in entries.values()} == {"path"}  # no git: nothing is fetched
    assert entries["batteries"] == {
        "type": "path", "scope": "leanprover-community", "name": "batteries",
        "manifestFile": "lake-manifest.json", "inherited": True,
        "dir": "../ws/.lake/packages/batteries", "configFile": "lakefile.toml",
    }  # fmt: skip


def test_a_workspace_without_packages_needs_no_manifest(tmp_path: Path) -> None:
    write_workspace(tmp_path / "bare")
    assert judge_requires(tmp_path / "bare", tmp_path / "judge") == ("", None)


def test_comparator_without_git_on_path_is_a_server_error_naming_it(
    mathlib_ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checker = _checker(mathlib_ws)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))  # lake, landrun, lean; no which, no git
    verdict = checker.check(
        mathlib_ws, "import Mathlib", CHALLENGE, HONEST, ("amc_t",), 60.0, sandboxed=False
    )
    assert verdict.status is Status.SERVER_ERROR  # never cached (cache.UNCACHED)
    assert "which, git not on PATH" in verdict.detail


def test_a_failing_lean_prefix_query_is_a_server_error_not_the_models_lean_error(
    mathlib_ws: Path, tmp_path: Path
) -> None:
    (tmp_path / "bin" / "lean").write_text("#!/bin/sh\nexit 3\n")  # elan without a toolchain
    verdict = _checker(mathlib_ws).check(
        mathlib_ws, "import Mathlib", CHALLENGE, HONEST, ("amc_t",), 60.0, sandboxed=False
    )
    assert verdict.status is Status.SERVER_ERROR
    assert "`lean` failed or is missing" in verdict.detail


@pytest.mark.parametrize(
    ("line", "tool"),
    [
        ("process 'which' exited with code 1", "which"),
        ("could not execute external process 'landrun'", "landrun"),
        ("Expected config file path as first argument.", ""),
        ("config.json: no such file or directory (error code: 2)", ""),
    ],
)
def test_comparator_failures_before_any_build_are_server_errors(line: str, tool: str) -> None:
    status, detail = rejection(Run(1, f"Building X\nuncaught exception: {line}\n"))
    assert status is Status.SERVER_ERROR and line in detail
    assert f"`{tool}`" in detail if tool else "failed or is missing" not in detail


def test_without_landlock_an_unsandboxed_comparator_check_is_refused(
    mathlib_ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kernel, "landlock_abi", lambda: 0)
    verdict = _checker(mathlib_ws).check(
        mathlib_ws, "import Mathlib", CHALLENGE, HONEST, ("amc_t",), 60.0, sandboxed=False
    )
    assert verdict.status is Status.SERVER_ERROR and "no Landlock" in verdict.detail


@pytest.mark.parametrize(
    ("abi", "bwrap", "ok"), [(5, False, True), (0, True, True), (0, False, False)]
)
def test_the_doctor_says_whether_landlock_confines_comparator(
    mathlib_ws: Path, monkeypatch: pytest.MonkeyPatch, abi: int, bwrap: bool, ok: bool
) -> None:
    monkeypatch.setattr(doctor, "landlock_abi", lambda: abi)
    monkeypatch.setattr(doctor, "sandbox_status", lambda: SandboxStatus(bwrap, "bwrap"))
    finding = doctor.kernel_checker_finding(mathlib_ws)
    assert finding.ok is ok and finding.data["landlock_abi"] == abi
    assert (f"Landlock ABI {abi}" if abi else "no Landlock") in finding.found
    assert ("refused" in finding.found) is not ok


def test_landrun_setup_says_where_go_1_24_comes_from() -> None:
    (step,) = [s for s in next_steps(Path("/ws"), have_elan=True) if "landrun" in s]
    assert "Go >= 1.24" in step and "Debian 12 ships 1.19" in step and "go.dev/dl" in step
