"""Steering the real embedded SmolLM2-135M (slow: loads the model)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn

from gapscope.app.kit import run_tasks
from gapscope.app.sweep import SweepSpec, run_sweep
from gapscope.models.checkpoints import CheckpointError
from gapscope.models.direction import DirectionError, ModelIdentity, SteeringVector
from gapscope.models.engine import Engine, GenerationRequest, SamplingParams
from gapscope.models.hooks import forward_hooks
from gapscope.models.steering import steering
from gapscope.models.task_steering import engine_for
from gapscope.s2b.config import resolve
from gapscope.steer.controls import control
from gapscope.steer.extract import extract_direction

pytestmark = pytest.mark.slow
MODEL = "gapscope/embedded"
SMALL = {"query_size": 2, "k_shot": 1}
MESSAGES = ({"role": "user", "content": "Name three colors."},)


@pytest.fixture(scope="module")
def engine() -> Engine:
    try:
        return engine_for(MODEL)
    except CheckpointError as error:
        pytest.skip(str(error))


@pytest.fixture(scope="module")
def clb(engine: Engine) -> SteeringVector:
    return extract_direction(
        engine, model_id=MODEL, config=resolve("demo", **SMALL), preset="demo", seeds=[0]
    )


def test_extraction_uses_the_last_quarter_and_finds_a_direction(clb: SteeringVector) -> None:
    assert clb.layers == tuple(range(23, 30))  # 7 of 30 layers, as the seed's 7B model
    assert clb.card.pairs == 2 and clb.card.model.hidden_size == 576
    assert all(norm > 0 for norm in clb.norms().values())


def test_hooked_layer_output_differs_by_exactly_alpha_v(
    engine: Engine, clb: SteeringVector
) -> None:
    outputs: list[torch.Tensor] = []

    def capture(module: nn.Module, args: tuple[Any, ...], output: Any) -> None:
        hidden = output[0] if isinstance(output, tuple) else output
        outputs.append(hidden.detach().clone())

    request = (MESSAGES, SamplingParams(max_tokens=1))
    with forward_hooks([(23, capture)]):
        engine.generate([GenerationRequest(*request)])
    with steering(clb, -3.0), forward_hooks([(23, capture)]):
        engine.generate([GenerationRequest(*request)])
    plain, steered = outputs
    # the block's input is untouched, so the steered output is the plain one plus alpha * v
    # (compared as a sum: the first position's residual is in the hundreds, where a difference
    # of two float32 values would lose the low bits of alpha * v)
    delta = (-3.0 * clb.directions[23]).expand_as(plain)
    torch.testing.assert_close(steered, plain + delta, rtol=1e-6, atol=1e-6)
    assert float((steered - plain - delta).abs().max()) < 1e-6 * float(plain.abs().max())


def test_alpha_zero_equals_unsteered_generation(engine: Engine, clb: SteeringVector) -> None:
    """Alpha 0 adds nothing. Both calls start from an empty KV cache: a second call that
    reused the first one's keys/values would recompute its last prompt token alone, whose
    last-bit float difference can flip an int8 activation's rounding (``fastest`` may choose
    int8) and change a greedy token: a property of reuse under int8, not of steering."""
    params = SamplingParams(max_tokens=16)
    engine.cache.clear()
    plain = engine.generate([GenerationRequest(MESSAGES, params)])[0]
    engine.cache.clear()
    with steering(clb, 0.0):
        zero = engine.generate([GenerationRequest(MESSAGES, params)])[0]
    assert zero.reused_tokens == 0
    assert zero.text == plain.text and zero.tokens == plain.tokens


def test_orthogonal_control_and_foreign_card(
    engine: Engine, clb: SteeringVector, tmp_path: Path
) -> None:
    ortho = control(clb, "orthogonal", seed=1)
    for layer in clb.layers:
        v, c = clb.directions[layer].double(), ortho.directions[layer].double()
        assert abs(float(torch.nn.functional.cosine_similarity(v, c, dim=0))) < 1e-6
        assert float(c.norm()) == pytest.approx(float(v.norm()), rel=1e-6)
    from tests.models.tiny import build_tiny_checkpoint

    tiny = Engine.from_pretrained(build_tiny_checkpoint(tmp_path / "tiny"), device="cpu")
    with pytest.raises(DirectionError, match="hidden size 576 vs 32"):
        clb.check_model(ModelIdentity.of(tiny.model, 2, "tiny"))


def test_dosage_sweep_end_to_end_on_a_small_preset(tmp_path: Path) -> None:
    spec = SweepSpec(
        model=MODEL,
        out=tmp_path / "sweep",
        alphas=(-4.0, 0.0, 1.0),
        controls=("orthogonal",),
        preset="demo",
        seeds=1,
        max_tokens=24,
        overrides=SMALL,
    )
    result = run_sweep(spec, lambda tasks, model: run_tasks(tasks, model, tmp_path / "logs"))
    assert len(result.points) == 5 and len(result.trends) == 2
    assert all(0 <= p.mean <= 100 for p in result.points)
    assert Path(result.files["png"]).is_file() and Path(result.files["svg"]).is_file()
