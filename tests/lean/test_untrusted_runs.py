"""Untrusted Lean runs only in the sandbox: T2's lake calls and the kernel checker go through
the sandbox argv, and without a sandbox a run stops before its first model call."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval

import gapscope.onng.task as onng_task
import gapscope.prove.task as prove_task
import gapscope.t2.task as t2_task
from gapscope.lean import sandbox
from gapscope.lean.childenv import ENV_PASS
from gapscope.lean.sandbox import SandboxStatus, SandboxUnavailable
from gapscope.lean.verdict import Checker, Status
from gapscope.models.scripted import REQUESTS, script
from gapscope.t2.extract import extract_answer
from gapscope.t2.repo import RepoConfig, Workspaces, evaluate_in_repo
from gapscope.t2.successors import target_identity
from tests.lean.conftest import FAKE_REPL
from tests.lean.test_acceptance import CHALLENGE, HEADER, HONEST, NAMES, fake_kernel

HERE = Path(__file__).parent
T2 = HERE.parent / "t2"
WORKING = SandboxStatus(True, "fake bwrap")
MISSING = SandboxStatus(False, "bubblewrap (bwrap) not found")


@pytest.fixture
def bwrap_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A logging ``bwrap`` first on PATH, reported as working."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "bwrap"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{HERE / "fake_bwrap.py"}" "$@"\n')
    wrapper.chmod(0o755)
    log = tmp_path / "bwrap.jsonl"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_BWRAP_LOG", str(log))
    monkeypatch.setenv(ENV_PASS, "FAKE_BWRAP_LOG,FAKE_COMPARATOR")
    monkeypatch.setattr(sandbox, "sandbox_status", lambda: WORKING)
    return log


def calls(log: Path) -> list[list[str]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def _t2_repo(tmp_path: Path) -> tuple[Path, Any]:
    from tests.t2.test_repo import BASE, USER, _record

    root = tmp_path / "checkout"
    (root / "Lib").mkdir(parents=True)
    (root / "lakefile.lean").write_text("-- fake project\n")
    (root / "Lib" / "Base.lean").write_text(BASE)
    (root / "Lib" / "User.lean").write_text(USER)
    return root, _record()


def test_t2_repository_track_runs_lake_only_in_the_sandbox(tmp_path: Path, bwrap_log: Path) -> None:
    """Regression: ``lake env lean`` / ``lake build`` ran the generated code on the host."""
    from tests.t2.test_repo import TARGET

    root, record = _t2_repo(tmp_path)
    lake = (sys.executable, str(T2 / "fake_lake.py"))
    workspaces = Workspaces(RepoConfig(root, lake=lake, workers=1))
    try:
        answer = extract_answer(f"```lean\n{TARGET}\n```", target_identity(record))
        result = evaluate_in_repo(record, answer, workspaces)
    finally:
        workspaces.close()
    assert result.ta and result.compiles, result
    wrapped = calls(bwrap_log)
    assert [c[c.index("--") + 3 : c.index("--") + 5] for c in wrapped] == [
        ["env", "lean"],
        ["build", "Lib.Base"],
    ]
    for argv in wrapped:
        assert "--unshare-all" in argv and "--die-with-parent" in argv
        writable = [argv[i + 1] for i, a in enumerate(argv) if a == "--bind"]
        assert len(writable) == 1 and Path(writable[0]).name == "checkout"  # the copy only
        assert not Path(writable[0]).is_relative_to(root)


def test_t2_repository_track_refuses_without_a_sandbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox, "sandbox_status", lambda: MISSING)
    monkeypatch.delenv("GAPSCOPE_LEAN_ALLOW_UNSANDBOXED", raising=False)
    with pytest.raises(SandboxUnavailable, match="apt-get install bubblewrap"):
        Workspaces(RepoConfig(tmp_path, workers=1))
    workspaces = Workspaces(RepoConfig(tmp_path, workers=1, allow_unsandboxed=True))
    assert not workspaces.sandboxed
    workspaces.close()


def test_the_kernel_checker_compiles_and_checks_inside_the_sandbox(
    project: Path, bwrap_log: Path
) -> None:
    verdict = fake_kernel().check(project, HEADER, CHALLENGE, HONEST, NAMES, 10.0, True)
    assert verdict.status is Status.VALID and verdict.checker is Checker.COMPARATOR
    wrapped = calls(bwrap_log)
    assert len(wrapped) == 1 and wrapped[0][-1].endswith("config.json")  # comparator, once
    for argv in wrapped:
        scratch = [argv[i + 1] for i, a in enumerate(argv) if a == "--bind"]
        assert len(scratch) == 1 and Path(scratch[0]).name.startswith("gapscope-kernel-")


def _prove_data(tmp_path: Path) -> Path:
    path = tmp_path / "mini.jsonl"
    statement = "theorem p_false : Nat.Prime 4 := by"
    row = {"name": "p_false", "split": "test", "header": HEADER, "formal_statement": statement}
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    return path


RUNS: dict[str, Callable[[Path, str, bool], Any]] = {
    "prove": lambda tmp, lean, allow: prove_task.prove(
        dataset=str(_prove_data(tmp)), lean=lean, n=1, k="1", allow_unsandboxed=allow
    ),
    "onng": lambda tmp, lean, allow: onng_task.onng(
        lams="0", limit=1, lean=lean, allow_unsandboxed=allow
    ),
    "t2": lambda tmp, lean, allow: t2_task.t2(
        data=str(T2 / "fixtures" / "records.jsonl"),
        lean=lean,
        context="none",
        limit=1,
        allow_unsandboxed=allow,
    ),
}


@pytest.mark.parametrize("diagnostic", sorted(RUNS))
def test_without_a_sandbox_the_run_stops_before_any_model_call(
    diagnostic: str, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox, "sandbox_status", lambda: MISSING)
    monkeypatch.delenv("GAPSCOPE_LEAN_ALLOW_UNSANDBOXED", raising=False)
    monkeypatch.setenv("GAPSCOPE_LEAN_REPL_CMD", f"{sys.executable} {FAKE_REPL}")
    model = script(f"no-sandbox-{diagnostic}", lambda messages: f"```lean\n{HONEST}\n```")
    lean = f"local:{project}"
    with pytest.raises(SandboxUnavailable, match="allow_unsandboxed"):
        RUNS[diagnostic](tmp_path, lean, False)
    assert REQUESTS[model.split("/")[1]] == []
    # The same run, explicitly allowed, does reach the model.
    task = RUNS[diagnostic](tmp_path, lean, True)
    log = inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none")[0]
    assert log.status == "success", log.error
    assert REQUESTS[model.split("/")[1]]
    if diagnostic == "prove":  # the log says which check settled the verdict, and how it ran
        assert log.samples is not None
        (score,) = log.samples[0].scores.values()  # type: ignore[union-attr]
        recorded = score.metadata["verdict"]  # type: ignore[index]
        assert recorded["status"] == "valid" and recorded["checker"] == "repl-text"
        assert recorded["sandboxed"] is False
