"""Fixtures for T2 and the executors: a fake Lean project, backends on the fake REPL, Ray."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gapscope.lean.childenv import ENV_PASS

FAKE_LEAN = Path(__file__).parent / "fake_lean.py"


@pytest.fixture(autouse=True)
def _pass_the_fakes_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fake lake and REPL read their modes from the environment, which the children that
    run model-written code get only through the allow-list."""
    monkeypatch.setenv(ENV_PASS, "FAKE_*")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "lean-toolchain").write_text("leanprover/lean4:v4.33.0-fake\n", encoding="utf-8")
    return root


@pytest.fixture
def fake_lean(project: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A local backend spec whose REPL is the fake in its T2 mode (tests/t2/fake_lean.py)."""
    monkeypatch.setenv("GAPSCOPE_LEAN_REPL_CMD", f"{sys.executable} {FAKE_LEAN}")
    monkeypatch.setenv("FAKE_LEAN_T2", "1")
    monkeypatch.setenv("GAPSCOPE_LEAN_ALLOW_UNSANDBOXED", "1")  # where bubblewrap is missing
    return f"local:{project}"


def fake_options(delay: float = 0.0, t2: bool = False, workers: int = 1) -> dict[str, Any]:
    """Backend options that run the fake REPL (tests/t2/fake_lean.py), unsandboxed (explicitly
    allowed: there is no bubblewrap here, and the backends refuse to run without it)."""
    env = {"FAKE_LEAN_CHECK_DELAY": str(delay)}
    if t2:
        env["FAKE_LEAN_T2"] = "1"
    return {
        "repl_command": (sys.executable, str(FAKE_LEAN)),
        "env": env,
        "max_workers": workers,
        "allow_unsandboxed": True,
    }


@pytest.fixture(scope="session")
def ray_session() -> Iterator[Any]:
    """One local Ray (2 CPUs) for every Ray test: start-up costs seconds, not per test."""
    ray = pytest.importorskip("ray")
    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()
