"""The real embedded models (slow: each dequantizes a GGUF; needs its package installed).

`GAPSCOPE_CACHE_DIR` is left as the user has it, so a warm cache makes these quick.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gapscope.models.checkpoints import CheckpointError
from gapscope.models.embedded import GEMMA3_270M, SMOLLM2, EmbeddedModel, embedded_checkpoint
from gapscope.models.engine import Engine, GenerationRequest, SamplingParams
from gapscope.models.model_cache import cache_problem
from tests.models.test_sliding_window import Messages, assert_matches_uncached, recorded_logits

pytestmark = pytest.mark.slow


def load(model: EmbeddedModel) -> Engine:
    try:
        checkpoint = embedded_checkpoint(model)
    except CheckpointError as error:
        pytest.skip(str(error))
    assert cache_problem(checkpoint) is None
    return Engine.from_pretrained(checkpoint, device="cpu")


@pytest.fixture(scope="module")
def gemma() -> Engine:
    return load(GEMMA3_270M)


@pytest.mark.parametrize(
    ("model", "layers"), [(SMOLLM2, 30), (GEMMA3_270M, 18)], ids=["smollm2", "gemma3"]
)
def test_embedded_model_loads_from_its_cached_copy_and_answers(
    model: EmbeddedModel, layers: int
) -> None:
    load(model)  # builds the copy if the cache is cold
    start = time.perf_counter()
    engine = load(model)
    assert time.perf_counter() - start < 10.0  # a cached copy is read, not reconverted
    assert len(engine.decoder_layers()) == layers
    request = GenerationRequest(
        ({"role": "user", "content": "What is 2 + 2?"},), SamplingParams(max_tokens=12)
    )
    reply = engine.generate([request])[0]
    assert reply.text.strip()
    assert reply.prompt_tokens > 5


def test_gemma_has_interleaved_sliding_window_layers(gemma: Engine) -> None:
    config = gemma.model.config
    assert config.sliding_window == 512
    assert set(config.layer_types) == {"sliding_attention", "full_attention"}


def test_gemma_kv_reuse_matches_uncached_beyond_its_sliding_window(gemma: Engine) -> None:
    """A multi-turn conversation longer than the 512-token window: each turn's logits
    with the reused cache equal one uncached forward over the whole conversation."""
    window = int(gemma.model.config.sliding_window)
    filler = " ".join(f"item {i} is {i * i};" for i in range(60))  # about 400 tokens
    messages: Messages = ()
    turns = [f"Remember this list: {filler}", "What is item 7?", f"And this: {filler}", "Bye."]
    for turn in turns:
        messages = (*messages, {"role": "user", "content": turn})
        with recorded_logits(gemma) as calls:
            result = gemma.generate([GenerationRequest(messages, SamplingParams(max_tokens=3))])[0]
        assert_matches_uncached(gemma, [messages], [result], calls)
        messages = (*messages, {"role": "assistant", "content": result.text})
    assert result.prompt_tokens > 2 * window
    assert result.reused_tokens > window


def test_smollm2_replies_to_the_diagnostics_prompts_alike_from_spilled_and_in_memory_entries() -> (
    None
):
    """The provider's engine keeps its prefix cache in files on the CPU: on the S2B-LM turns
    the tasks send (each extends the turn before it, so later ones reuse an entry), greedy
    replies equal those of the same engine holding its entries in memory, token for token."""
    from benchmarks.task_prompts import task_prompts

    from gapscope.models.kvcache import PrefixCache

    turns = [c for c in task_prompts() if "Game " in c[-1]["content"]][:8]
    replies = []
    for spilled in (True, False):
        engine = load(SMOLLM2)
        assert engine.cache.spills
        if not spilled:
            engine.cache = PrefixCache(16, engine.cache.max_bytes)
        results = [
            engine.generate([GenerationRequest(turn, SamplingParams(max_tokens=16))])[0]
            for turn in turns
        ]
        assert sum(r.reused_tokens for r in results) > 0
        replies.append([(r.tokens, r.reused_tokens) for r in results])
    assert replies[0] == replies[1]


_CONVERT_TWICE = """
import json, resource, sys
from pathlib import Path
from gapscope.models.embedded import SMOLLM2, convert_gguf, dequantize_gguf
from gapscope.models.model_cache import sha256_file
out = Path(sys.argv[1])
gguf = SMOLLM2.gguf(SMOLLM2, out)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
convert_gguf(gguf, out / "child")
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
dequantize_gguf(gguf, out / "here")
print(json.dumps({
    "grew_mb": (after - before) / 1024, "child_mb": child / 1024,
    "same": sha256_file(out / "child" / "model.safetensors")
    == sha256_file(out / "here" / "model.safetensors"),
}))
"""


def test_a_gguf_is_converted_in_a_child_process_into_the_same_weights(tmp_path: Path) -> None:
    """The fp32 model a conversion builds (540 MB for SmolLM2) never enters the converting
    process's memory: a first ``make demo`` converts Gemma while SmolLM2 is loaded."""
    try:
        SMOLLM2.version()
    except CheckpointError as error:
        pytest.skip(str(error))
    done = subprocess.run(
        [sys.executable, "-c", _CONVERT_TWICE, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
    )
    measured = json.loads(done.stdout.strip().splitlines()[-1])
    assert measured["child_mb"] > 540  # the child held the fp32 weights ...
    assert measured["grew_mb"] < 100  # ... and this process did not
    assert measured["same"]  # the bytes an in-process conversion writes
