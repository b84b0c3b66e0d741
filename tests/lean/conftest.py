"""Fixtures for the Lean layer: a fake REPL project and a factory for local backends."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gapscope.lean.local import LocalBackend

FAKE_REPL = Path(__file__).parent / "fake_repl.py"
FAKE_TOOLCHAIN = "leanprover/lean4:v4.33.0-fake"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "lean-toolchain").write_text(FAKE_TOOLCHAIN + "\n", encoding="utf-8")
    return root


@pytest.fixture
def shared_project() -> Iterator[Path]:
    """A project any uid can read (pytest's tmp_path is root's alone): for the sandbox
    started as an unprivileged uid."""
    root = Path(tempfile.mkdtemp(prefix="gapscope-bounds-"))
    root.chmod(0o755)
    (root / "lean-toolchain").write_text(FAKE_TOOLCHAIN + "\n", encoding="utf-8")
    yield root
    shutil.rmtree(root)


@pytest.fixture
def repl_log(tmp_path: Path) -> Path:
    return tmp_path / "repl-log.jsonl"


def read_log(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def make_backend(project: Path, repl_log: Path) -> Iterator[Callable[..., LocalBackend]]:
    made: list[LocalBackend] = []

    def make(**kwargs: Any) -> LocalBackend:
        env = {"FAKE_REPL_LOG": str(repl_log), **kwargs.pop("env", {})}
        # No bubblewrap here, and a sandbox would hide the log in its own /tmp: the tests run
        # the fake REPL unsandboxed, which the backend allows only when told so.
        kwargs.setdefault("sandbox", False)
        kwargs.setdefault("allow_unsandboxed", True)
        backend = LocalBackend(
            project, repl_command=(sys.executable, str(FAKE_REPL)), env=env, **kwargs
        )
        made.append(backend)
        return backend

    yield make
    for backend in made:
        backend.close()
