"""The embedded model as the provider loads it by default reproduces fp32's greedy output on
the diagnostics' own prompts (slow: loads SmolLM2 and decodes 28 continuations twice).

The reference is the fp32 checkpoint's own ``model.generate``, one prompt at a time, loaded
apart from the engine; the default engine
decodes the same prompts batched (8 a batch, left-padded), through its KV cache layout. A
format or an engine change that moves the replies fails here at the stated rate.

Both sides stop at the end-of-turn token, as a diagnostic's call does (``agreement`` then
asks a shorter reference to be matched whole). An earlier form forced 32 tokens on both
sides, but the two ways do not agree on what comes after the end: ``min_new_tokens`` masks
the end token and takes the runner-up, ``ignore_eos`` emits it and goes on. Half the S2B
prompts end after "Answer: same", so that form measured 18 of 28 and blamed batching; no
reply a diagnostic reads differed.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch
from benchmarks.task_prompts import task_prompts
from transformers import AutoModelForCausalLM

from gapscope.models.calibration import FAITHFUL_SHARE, FAITHFUL_TOKENS, agreement
from gapscope.models.checkpoints import CheckpointError
from gapscope.models.engine import GenerationRequest, SamplingParams
from gapscope.models.inspect_api import ModelArgs, model_source, shared_engine

pytestmark = pytest.mark.slow


def _reference(model: Any, prompts: list[list[int]]) -> list[list[int]]:
    continuations = []
    with torch.inference_mode():
        for prompt in prompts:
            ids = torch.tensor([prompt])
            out = model.generate(
                input_ids=ids,
                attention_mask=torch.ones_like(ids),
                max_new_tokens=FAITHFUL_TOKENS,
                do_sample=False,
            )
            continuations.append(out[0, ids.shape[1] :].tolist())
    return continuations


def test_the_default_format_follows_fp32_on_the_diagnostics_prompts() -> None:
    try:
        source = model_source("embedded")
    except CheckpointError as error:
        pytest.skip(str(error))
    engine = shared_engine(source, ModelArgs(device="cpu", kv_reuse=False))
    conversations = task_prompts()
    assert len(conversations) >= 20
    params = SamplingParams(max_tokens=FAITHFUL_TOKENS)
    replies = engine.generate([GenerationRequest(c, params, hooks=None) for c in conversations])
    fp32: Any = AutoModelForCausalLM.from_pretrained(source.checkpoint, local_files_only=True)
    reference = _reference(fp32.eval(), [engine.render(c) for c in conversations])
    measured = agreement(reference, [list(reply.tokens) for reply in replies])
    assert measured.share >= FAITHFUL_SHARE, measured.line()
