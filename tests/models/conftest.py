"""Fixtures: tiny checkpoints built once per session, a fresh engine per test."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from gapscope.models.engine import Engine, EngineConfig
from tests.models.tiny import build_tiny_checkpoint

EngineFactory = Callable[..., Engine]


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_checkpoint(tmp_path_factory.mktemp("tiny-llama"))


@pytest.fixture(scope="session")
def tiny_gemma_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_checkpoint(tmp_path_factory.mktemp("tiny-gemma3"), architecture="gemma3")


@pytest.fixture
def make_engine(tiny_checkpoint: Path) -> EngineFactory:
    def make(**config: object) -> Engine:
        return Engine.from_pretrained(
            tiny_checkpoint,
            device="cpu",
            config=EngineConfig(**config),  # type: ignore[arg-type]
        )

    return make


@pytest.fixture
def private_tmpdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh directory as tempfile's (what ``TMPDIR`` sets), so a test sees its files only."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def wait_until(condition: Callable[[], object]) -> None:
    """Poll ``condition`` until it holds; fail rather than hang."""
    pause = threading.Event()
    for _ in range(10_000):
        if condition():
            return
        pause.wait(0.001)
    pytest.fail("condition never held")
