"""Steering through int8 weights: exact per row, and the dosage curve of fp32 within 2 %.

The int8 format quantizes only the linear layers; steering adds to the fp32 residual stream
between decoder layers, as on the fp32 path. Two promises are checked on a tiny Llama:
a steered row decodes the same tokens batched with other rows as alone, and a dosage curve
(mean teacher-forced log-probability of a fixed reply over alphas -4..2) stays within
``TOLERANCE`` (relative) of the fp32 curve at every alpha. Measured: at most 1.0 % (0.19 of
19.5 nats, alpha 0), on a curve that steering moves by 9.5 nats.
"""

from __future__ import annotations

from pathlib import Path

import torch

from gapscope.models.engine import Engine, EngineConfig, GenerationRequest, SamplingParams
from gapscope.models.hooks import attached, current_hooks
from gapscope.models.steering import steering
from tests.steer.conftest import random_vector

ALPHAS = (-4.0, -2.0, -1.0, 0.0, 1.0, 2.0)
TOLERANCE = 0.02
"""Largest gap between the int8 and fp32 curves, relative to the fp32 value at that alpha."""


def _engine(checkpoint: Path, dtype: str, batch_size: int = 8) -> Engine:
    return Engine.from_pretrained(
        checkpoint, device="cpu", dtype=dtype, config=EngineConfig(batch_size=batch_size)
    )


def test_a_steered_row_decodes_the_same_batched_and_alone(tiny64: Path) -> None:
    engine = _engine(tiny64, "int8")
    assert engine.weight_format == "int8"
    vector = random_vector(engine, (1, 2))
    params = SamplingParams(max_tokens=12, ignore_eos=True)
    prompts = ["w1 w2 w3", "w9", "w4 w4 w5 w6 w7 w8 w10 w11", "w20 w21"]
    with steering(vector, -3.0):
        requests = [GenerationRequest(({"role": "user", "content": p},), params) for p in prompts]
    batched = engine.generate(requests)
    engine.clear_cache()
    alone = [engine.generate([request])[0] for request in requests]
    assert [r.tokens for r in batched] == [r.tokens for r in alone]


def _curve(engine: Engine, vector_layers: tuple[int, ...]) -> list[float]:
    vector = random_vector(engine, vector_layers)
    prompt = engine.render([{"role": "user", "content": "w1 w2 w3 w4"}])
    reply = [8, 9, 10, 11, 12, 13]
    ids = torch.tensor([prompt + reply])
    curve = []
    for alpha in ALPHAS:
        with (
            steering(vector, alpha),
            torch.inference_mode(),
            attached(engine.model, engine.decoder_layers(), current_hooks()),
        ):
            logits = engine.model(input_ids=ids).logits[0].float()
        logp = torch.log_softmax(logits[len(prompt) - 1 : -1], dim=-1)
        curve.append(float(logp[torch.arange(len(reply)), torch.tensor(reply)].mean()))
    return curve


def test_the_int8_dosage_curve_is_the_fp32_one_within_tolerance(tiny64: Path) -> None:
    fp32, int8 = _engine(tiny64, "float32"), _engine(tiny64, "int8")
    exact, approx = _curve(fp32, (1, 2)), _curve(int8, (1, 2))
    for alpha, a, b in zip(ALPHAS, exact, approx, strict=True):
        assert abs(a - b) <= TOLERANCE * abs(a), f"alpha {alpha}: fp32 {a:.3f}, int8 {b:.3f}"
    assert max(exact) - min(exact) > 1.0  # the steering moves the curve at all
