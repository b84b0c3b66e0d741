"""The known-answer self-test: what it ships, what it records, and the gate it feeds.

Until this installation's REPL/checker path has passed, ``run prove|onng|t2`` with a local
backend stops with exit 2 before asking the model anything (as without a sandbox).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gapscope.app.main import app
from gapscope.lean.childenv import ENV_PASS
from gapscope.lean.doctor import selftest_finding
from gapscope.lean.factory import open_backend
from gapscope.lean.local import LocalBackend
from gapscope.lean.selftest import ENV_ALLOW_UNTESTED, SelfTestRequired, load_cases, programs
from gapscope.lean.selftest.cases import Case, cases_file
from gapscope.lean.selftest.programs import COMPILE_PATH, shipped_programs
from gapscope.lean.selftest.runner import run_selftest
from gapscope.models.scripted import REQUESTS, script
from tests.lean.conftest import FAKE_REPL
from tests.lean.test_acceptance import fake_kernel

ISSUE_CASES = {
    "honest-rfl", "sorry", "user-axiom", "native-decide", "namespace-redefinition", "private",
    "changed-constructor", "decidable-override", "universe-names", "challenge-tampered",
    "unchecked-constant", "explicit-universe", "compile-open-in-axiom",
}  # fmt: skip
FAKE_CASES = [
    Case("honest", "theorem", "theorem t : 1 = 1 := rfl", "valid", "theorem t : 1 = 1 := sorry",
         ("t",)),
    Case("sorry", "theorem", "theorem t : 1 = 1 := sorry", "rejected",
         "theorem t : 1 = 1 := sorry", ("t",)),
    Case("compile-axiom", "compile", "axiom c : False\ntheorem target : False := c", "rejected"),
]  # fmt: skip


FAKE_LAKE = """#!/bin/sh
# `lake env lean FILE`: every program compiles with a warning; FAILING names one that does not
[ "$1 $2" = "env lean" ] || exit 2
echo "$3:1:0: warning: declaration uses 'sorry'"
case "$3" in *"$FAILING") echo "$3:12:4: error: unknown constant 'MyNat.foo'"; exit 1;; esac
"""


def fake_lake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str = "") -> None:
    """Put a fake ``lake`` first on PATH; a program whose path ends with ``failing`` fails."""
    bin_dir = tmp_path / "fake-lake-bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "lake").write_text(FAKE_LAKE)
    (bin_dir / "lake").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("FAILING", failing or "no such program")
    monkeypatch.setenv(ENV_PASS, "FAILING")  # Lean's children see only allow-listed variables


@pytest.fixture
def gated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The gate as a user meets it: no opt-out; the fake REPL stands in for the REPL and a
    fake ``lake`` compiles every shipped program."""
    fake_lake(tmp_path, monkeypatch)
    monkeypatch.delenv(ENV_ALLOW_UNTESTED)
    monkeypatch.setenv("GAPSCOPE_LEAN_REPL_CMD", f"{sys.executable} {FAKE_REPL}")
    monkeypatch.setenv("GAPSCOPE_LEAN_SANDBOX", "off")
    monkeypatch.setenv("GAPSCOPE_LEAN_ALLOW_UNSANDBOXED", "1")
    monkeypatch.setenv("GAPSCOPE_LEAN_KERNEL_CHECKER", "none")


def _backend(project: Path, **kwargs: object) -> LocalBackend:
    return LocalBackend(
        project, repl_command=(sys.executable, str(FAKE_REPL)), sandbox=False,
        allow_unsandboxed=True, **kwargs,  # type: ignore[arg-type]
    )  # fmt: skip


def test_the_shipped_cases_cover_the_issue_and_each_has_a_known_answer() -> None:
    cases = load_cases()
    assert len(cases) >= 20
    assert {c.name for c in cases} >= ISSUE_CASES
    assert {c.expect for c in cases} == {"valid", "rejected"}
    misses = {c.name for c in cases if "repl-text" in c.misses}
    assert misses == {
        "changed-constructor", "kind-change", "unchecked-constant", "add-decl-core-unchecked",
        "replaced-permitted-axiom",
    }  # docs/lean.md  # fmt: skip


SAFEVERIFY = "SafeVerify@b291b588a53999a7e837dda61c7dbfe8c550c814"
LEAN4CHECKER = "lean4checker@91a7f0e8e9dffe927089f5a6edcfeeb8a0e07709"


def test_each_false_proof_class_of_issue_37_has_a_case_citing_its_reference_suite() -> None:
    raw = {c["name"]: c for c in json.loads(cases_file().read_text(encoding="utf-8"))["cases"]}
    classes = {
        "opaque-hidden-axiom": "comparator@5d21b89 tests/projects/opaque_value",
        "implemented-by": SAFEVERIFY,
        "unsafe-definition": SAFEVERIFY,
        "partial-definition": "comparator@5d21b89",
        "prelude-primitive": "comparator@5d21b89 tests/projects/primitive_issue",
        "add-decl-core-unchecked": LEAN4CHECKER,
        "replaced-permitted-axiom": LEAN4CHECKER,
        "macro-redefines-equality": SAFEVERIFY,
        "honest-open-in": "compile-open-in-axiom",
        "honest-local-notation": SAFEVERIFY,
        "mathlib-header-honest": "comparator@5d21b89 Main.lean safeLakeBuild",
        "initialize-hostile": "repl@8948401 REPL/Frontend.lean:41",
        "challenge-forged-for-a-later-build": "comparator@5d21b89 Main.lean:270-281",
    }
    for name, reference in classes.items():
        assert reference in raw[name]["reference"], name
    loaded = {c.name: c for c in load_cases()}
    assert loaded["mathlib-header-honest"].header == "import Mathlib"
    assert loaded["mathlib-header-honest"].needs == ("mathlib",)
    assert loaded["honest-open-in"].expect == loaded["honest-local-notation"].expect == "valid"
    # both hostile cases state what the challenge does not: only the judge's order (a
    # challenge built and exported before the solution's build) or its refusal to run a
    # solution's initializer keeps them rejected
    for name in ("initialize-hostile", "challenge-forged-for-a-later-build"):
        case = loaded[name]
        assert (case.kind, case.expect, case.misses) == ("theorem", "rejected", ())
        assert "theorem t : True := trivial" in case.solution


def test_a_case_needing_a_package_the_workspace_lacks_is_recorded_skipped(
    project: Path, gated: None
) -> None:
    needs = Case("needs-mathlib", "theorem", "theorem t : 1 = 1 := rfl", "valid",
                 "theorem t : 1 = 1 := sorry", ("t",), header="import Mathlib",
                 needs=("mathlib",))  # fmt: skip
    with _backend(project, kernel_checker=None) as backend:
        result = run_selftest(backend, [needs], timeout_s=10.0)
    [skipped] = [r for r in result.results if r.case == "needs-mathlib"]
    assert (skipped.status, skipped.ok) == ("skipped", None) and "mathlib" in skipped.detail
    assert result.passed


def test_a_run_is_refused_until_the_selftest_passed_here(project: Path, gated: None) -> None:
    with pytest.raises(SelfTestRequired, match=f"gapscope lean selftest {project}"):
        open_backend(f"local:{project}")
    with _backend(project, kernel_checker=None) as backend:
        result = run_selftest(backend, FAKE_CASES, timeout_s=10.0)
    assert result.passed
    assert [r.ok for r in result.results] == [True] * (len(shipped_programs()) + 3)
    record = json.loads(result.record.read_text(encoding="utf-8"))
    assert [r["passed"] for r in record.values()] == [True]
    with open_backend(f"local:{project}") as opened:
        assert isinstance(opened, LocalBackend) and opened.selftest
        verdict = opened.check("theorem v : True := trivial")
    assert verdict.selftest is True and verdict.checks == ("repl-text",)
    assert selftest_finding(project).ok


def test_a_failed_case_keeps_the_gate_shut(project: Path, gated: None) -> None:
    wrong = [Case("credulous", "theorem", "theorem t : 1 = 2 := by decide", "rejected",
                  "theorem t : 1 = 2 := sorry", ("t",))]  # fmt: skip
    with _backend(project, kernel_checker=None) as backend:
        result = run_selftest(backend, wrong, timeout_s=10.0)  # the fake REPL accepts it
    assert not result.passed and result.failures[0].case == "credulous"
    with pytest.raises(SelfTestRequired, match="failed"):
        open_backend(f"local:{project}")
    finding = selftest_finding(project)
    assert not finding.ok and "credulous@repl-text" in finding.found


def test_a_pass_certifies_only_its_own_checker(project: Path, gated: None) -> None:
    with _backend(project, kernel_checker=None) as backend:
        assert run_selftest(backend, FAKE_CASES, timeout_s=10.0).passed
    with _backend(project, kernel_checker=fake_kernel()) as judged:
        assert not judged.selftest  # another judge: its own self-test has not run
        result = run_selftest(judged, FAKE_CASES, timeout_s=10.0)
    assert {r.path for r in result.results} == {COMPILE_PATH, "repl-text", "kernel:comparator"}
    assert result.passed


def test_a_solution_comparator_cannot_build_is_its_refusal_in_the_selftest(
    project: Path, gated: None
) -> None:
    """The self-test puts every theorem case to comparator, also those the REPL rejects for
    not compiling (an ``unsafe`` or ``partial`` definition): comparator failing to build such
    a solution, after the challenge, is a rejection there; an honest case that fails so is not."""
    unbuilt = [
        Case("unbuildable", "theorem", "theorem t : 1 = 1 := rfl -- fake:error", "rejected",
             "theorem t : 1 = 1 := sorry", ("t",)),
        Case("honest-unbuildable", "theorem", "theorem t : 1 = 1 := rfl -- fake:error", "valid",
             "theorem t : 1 = 1 := sorry", ("t",)),
    ]  # fmt: skip
    with _backend(project, kernel_checker=fake_kernel()) as backend:
        result = run_selftest(backend, unbuilt, timeout_s=10.0)
    kernel = {r.case: (r.status, r.ok) for r in result.results if r.path == "kernel:comparator"}
    assert kernel == {
        "unbuildable": ("server_error", True),
        "honest-unbuildable": ("server_error", False),
    }


def test_the_selftest_compiles_every_shipped_lean_program(project: Path, gated: None) -> None:
    shipped = shipped_programs()
    assert {"onng/problems/library.lean", "t2/mining/GapscopeMine.lean"} <= set(shipped)
    with _backend(project, kernel_checker=None) as backend:
        result = run_selftest(backend, FAKE_CASES[:1], timeout_s=10.0)
    compiled = [(r.case, r.status, r.ok) for r in result.results if r.path == COMPILE_PATH]
    assert compiled == [(name, "compiled", True) for name in shipped]  # warnings are fine
    assert result.passed


def test_a_shipped_program_that_does_not_compile_fails_the_selftest(
    project: Path, gated: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_lake(tmp_path, monkeypatch, failing="library.lean")
    with _backend(project, kernel_checker=None) as backend:
        result = run_selftest(backend, FAKE_CASES[:1], timeout_s=10.0)
    assert not result.passed
    [failure] = result.failures
    assert (failure.case, failure.path, failure.status) == (
        "onng/problems/library.lean",
        COMPILE_PATH,
        "lean_error",
    )
    assert failure.detail.startswith("onng/problems/library.lean: ")
    assert failure.detail.endswith(":12:4: error: unknown constant 'MyNat.foo'")
    with pytest.raises(SelfTestRequired, match="failed"):
        open_backend(f"local:{project}")


def test_a_changed_shipped_program_changes_the_installation_key(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program = tmp_path / "Tracer.lean"
    monkeypatch.setattr(programs, "shipped_programs", lambda: {"Tracer.lean": program})

    def key() -> str:
        with _backend(project, kernel_checker=None) as backend:
            return backend.installation.source

    program.write_text("def x := 1\n", encoding="utf-8")
    before = key()
    program.write_text("def x := 2\n", encoding="utf-8")
    assert key() != before  # a pass for the old program certifies nothing about the new one


def _minif2f(tmp_path: Path) -> Path:
    path = tmp_path / "mini.jsonl"
    row = {"name": "aime_a", "split": "test", "header": "",
           "formal_statement": "theorem aime_a : 1 + 1 = 2 := by"}  # fmt: skip
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("command", ["prove", "onng", "t2"])
def test_an_untested_local_backend_stops_the_run_before_any_model_call(
    command: str, project: Path, tmp_path: Path, gated: None
) -> None:
    model = script(f"untested-{command}", lambda messages: "```lean4\nrfl\n```")
    data = Path(__file__).parents[1] / "t2" / "fixtures" / "records.jsonl"
    extra = {
        "prove": ["--dataset", str(_minif2f(tmp_path))],
        "onng": [],
        "t2": ["--data", str(shutil.copy(data, tmp_path / "records.jsonl"))],
    }[command]
    args = ["run", command, "--model", model, "--lean", f"local:{project}", *extra]
    result = CliRunner().invoke(app, [*args, "--log-dir", str(tmp_path / "logs"), "--json"])
    assert result.exit_code == 2, result.output
    assert "gapscope lean selftest" in json.loads(result.stdout)["error"]
    assert not REQUESTS[f"untested-{command}"]  # the model was never asked
    assert not list((tmp_path / "logs").glob("*.eval"))


def test_the_selftest_command_records_and_reports(project: Path, gated: None) -> None:
    result = CliRunner().invoke(app, ["lean", "selftest", str(project), "--json"])
    envelope = json.loads(result.stdout)
    # the fake REPL is credulous: the shipped cases catch it, and the command says so
    assert result.exit_code == 1 and envelope["details"]["passed"] is False
    assert len(envelope["details"]["results"]) >= 20
    assert Path(envelope["details"]["record"]).is_file()


def test_setup_runs_the_selftest_where_the_workspace_is_built(
    tmp_path: Path, gated: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "ws"
    runner = CliRunner()
    first = json.loads(runner.invoke(app, ["lean", "setup", str(ws), "--json"]).stdout)
    assert first["details"]["selftest"] is None  # not built yet: the last steps say what to run
    assert any("gapscope lean selftest" in step for step in first["details"]["next_steps"])
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "lake").write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "lake").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    repl = ws / ".lake" / "packages" / "REPL" / ".lake" / "build" / "bin" / "repl"
    repl.parent.mkdir(parents=True)
    repl.write_text("")
    again = runner.invoke(app, ["lean", "setup", str(ws), "--force", "--json"])
    ran = json.loads(again.stdout)["details"]["selftest"]
    assert ran is not None and ran["passed"] is False  # the fake REPL is credulous
    assert Path(ran["record"]).is_file()
