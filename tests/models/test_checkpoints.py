"""Checkpoint resolution: the cache root, argument validation and error messages."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gapscope.models import checkpoints
from gapscope.models.checkpoints import CheckpointError, cache_root


def test_cache_root_honours_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GAPSCOPE_CACHE_DIR", str(tmp_path))
    assert cache_root() == tmp_path
    monkeypatch.delenv("GAPSCOPE_CACHE_DIR")
    assert cache_root().name == "gapscope"


def test_bad_device_and_dtype_are_named(tiny_checkpoint: Path) -> None:
    with pytest.raises(ValueError, match="dtype='float8'"):
        checkpoints.load_checkpoint(tiny_checkpoint, device="cpu", dtype="float8")
    with pytest.raises(ValueError, match="device='gpu0'"):
        checkpoints.load_checkpoint(tiny_checkpoint, device="gpu0")


def test_incomplete_directory_is_not_sent_to_the_hub(tiny_checkpoint: Path, tmp_path: Path) -> None:
    """A local directory without weights is a broken checkpoint, not an uncached hub name."""
    broken = shutil.copytree(tiny_checkpoint, tmp_path / "broken")
    (broken / "model.safetensors").unlink()
    with pytest.raises(CheckpointError, match="does not hold a complete checkpoint") as error:
        checkpoints.load_checkpoint(broken, device="cpu")
    assert "allow_download" not in str(error.value)


def test_a_directory_that_is_no_checkpoint_says_so(tmp_path: Path) -> None:
    """A folder of anything else (here: a README) used to fail with "install sentencepiece or
    tiktoken", transformers' guess at a tokenizer it could not find."""
    (tmp_path / "README.md").write_text("not a model\n")
    with pytest.raises(
        CheckpointError, match="is not a Hugging Face checkpoint: it has no config"
    ) as error:
        checkpoints.load_checkpoint(tmp_path, device="cpu")
    assert "sentencepiece" not in str(error.value) and "tiktoken" not in str(error.value)
