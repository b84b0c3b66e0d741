"""Application: exactly alpha * v at the hooked layer, alpha = 0 is no steering, KV isolation,
controls, and the direction file with its model check."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn

from gapscope.models.direction import DirectionError, ModelIdentity, SteeringVector
from gapscope.models.engine import Engine, GenerationRequest, SamplingParams
from gapscope.models.hooks import current_hooks, forward_hooks
from gapscope.models.steering import steering
from gapscope.steer.controls import control
from tests.models.tiny import build_tiny_checkpoint
from tests.steer.conftest import EngineFactory, random_vector

MESSAGES = ({"role": "user", "content": "w1 w2 w3 w4 w5"},)
PARAMS = SamplingParams(max_tokens=8)


def _generate(engine: Engine, messages: tuple[dict[str, str], ...] = MESSAGES) -> Any:
    return engine.generate([GenerationRequest(messages, PARAMS)])[0]


def _layer_output(engine: Engine, layer: int) -> torch.Tensor:
    """The prefill output of ``layer`` during one generate call made in the current context."""
    captured: list[torch.Tensor] = []

    def capture(module: nn.Module, args: tuple[Any, ...], output: Any) -> None:
        hidden = output[0] if isinstance(output, tuple) else output
        captured.append(hidden.detach().clone())

    with forward_hooks([(layer, capture)]):
        _generate(engine)
    return captured[0]


@pytest.mark.parametrize("alpha", [-3.0, 0.5])
def test_hooked_layer_output_moves_by_exactly_alpha_v_at_every_position(
    make_engine: EngineFactory, alpha: float
) -> None:
    engine = make_engine(kv_reuse=False)
    vector = random_vector(engine, (1, 2))
    plain = _layer_output(engine, 1)
    with steering(vector, alpha):
        steered = _layer_output(engine, 1)
    delta = (alpha * vector.directions[1]).expand_as(plain)
    torch.testing.assert_close(steered, plain + delta, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(steered - plain, delta, rtol=0, atol=1e-5)


def test_alpha_zero_installs_nothing_and_generates_identically(make_engine: EngineFactory) -> None:
    engine = make_engine()
    vector = random_vector(engine, (1, 2, 3))
    plain = _generate(engine)
    with steering(vector, 0.0) as hooks:
        assert hooks is None and current_hooks() is None
        zero = _generate(engine)
    assert zero.tokens == plain.tokens and zero.text == plain.text
    assert zero.reused_tokens > 0  # it even shares the unsteered KV cache
    with steering(vector, 8.0):
        strong = _generate(engine)
    assert strong.tokens != plain.tokens  # steering is not a no-op at this strength


def test_steered_and_unsteered_requests_never_share_kv_entries(make_engine: EngineFactory) -> None:
    engine = make_engine()
    vector = random_vector(engine, (1,))
    first = _generate(engine)
    follow_up = (*MESSAGES, {"role": "assistant", "content": first.text}, MESSAGES[0])
    with steering(vector, 4.0):
        steered = _generate(engine, follow_up)
        assert steered.reused_tokens == 0  # the unsteered prefix is not reused
        again = _generate(engine, follow_up)
        assert again.reused_tokens > 0 and again.tokens == steered.tokens
    with steering(vector, 2.0):
        assert _generate(engine, follow_up).reused_tokens == 0  # another alpha, another space
    assert _generate(engine, follow_up).reused_tokens > 0  # unsteered reuses its own
    uncached = make_engine(kv_reuse=False)
    with steering(vector, 4.0):
        assert _generate(uncached, follow_up).tokens == steered.tokens


def test_equal_steering_batches_together(make_engine: EngineFactory) -> None:
    engine = make_engine(batch_size=8)
    vector = random_vector(engine, (2,))
    with steering(vector, 1.5):
        a = GenerationRequest(MESSAGES, PARAMS)
    with steering(vector, 1.5):
        b = GenerationRequest(MESSAGES, PARAMS)
    assert a.hooks == b.hooks
    engine.generate([a, b])
    assert engine.stats.batches == 1


def _conditions(engine: Engine) -> list[GenerationRequest]:
    """A dosage sweep's rows: unsteered, v at two alphas, another vector on other layers;
    different prompts and budgets, so rows leave the batch at different steps."""
    v, w = random_vector(engine, (1, 2)), random_vector(engine, (2, 3), seed=1)
    prompts = ["w1 w2 w3", "w9", "w4 w4 w5 w6 w7 w8 w10", "w20 w21"]
    requests = []
    for prompt, (vector, alpha), n in zip(
        prompts, ((None, 0.0), (v, -3.0), (v, 1.0), (w, -3.0)), (6, 9, 4, 7), strict=True
    ):
        with steering(vector, alpha):
            messages = ({"role": "user", "content": prompt},)
            requests.append(GenerationRequest(messages, SamplingParams(max_tokens=n)))
    return requests


def test_differently_steered_rows_share_a_batch_and_decode_as_alone(
    make_engine: EngineFactory,
) -> None:
    engine = make_engine(batch_size=8)
    requests = _conditions(engine)
    batched = engine.generate(requests)
    assert engine.stats.batches == 1  # four conditions, one forward pass per step
    for request, together in zip(requests, batched, strict=True):
        alone = make_engine().generate([request])[0]
        assert together.tokens == alone.tokens
    # each row stored its KV under its own steering: a follow-up reuses only its own
    for request, first in zip(requests, batched, strict=True):
        follow = GenerationRequest(
            (*request.messages, {"role": "assistant", "content": first.text}, MESSAGES[0]),
            PARAMS,
            hooks=request.hooks,
        )
        assert engine.generate([follow])[0].reused_tokens > 0


def test_orthogonal_control_is_orthogonal_with_the_same_norm(make_engine: EngineFactory) -> None:
    engine = make_engine()
    vector = random_vector(engine, (1, 2, 3))
    ortho = control(vector, "orthogonal", seed=7)
    rand = control(vector, "random", seed=7)
    for layer in vector.layers:
        v = vector.directions[layer].double()
        for c in (ortho, rand):
            assert float(c.directions[layer].norm()) == pytest.approx(float(v.norm()), rel=1e-6)
        cos = torch.nn.functional.cosine_similarity(ortho.directions[layer].double(), v, dim=0)
        assert abs(float(cos)) < 1e-6
    assert ortho.card.kind == "orthogonal" and ortho.card.control_seed == 7
    assert ortho.fingerprint == control(vector, "orthogonal", seed=7).fingerprint  # seeded
    assert ortho.fingerprint != control(vector, "orthogonal", seed=8).fingerprint
    with pytest.raises(ValueError, match="control must be one of"):
        control(vector, "mirror")


def test_direction_file_round_trip(make_engine: EngineFactory, tmp_path: Path) -> None:
    engine = make_engine()
    vector = random_vector(engine, (0, 3))
    loaded = SteeringVector.load(vector.save(tmp_path / "dir"))
    assert loaded.card == vector.card
    assert loaded.fingerprint == vector.fingerprint
    card = json.loads((tmp_path / "dir" / "card.json").read_text())
    for key in ("model", "layers", "norms", "pairs", "preset", "seeds", "prompt_sha"):
        assert key in card
    assert card["model"]["hidden_size"] == 64 and card["model"]["n_layers"] == 4
    assert card["gapscope_version"]


def test_direction_from_another_model_is_refused(
    make_engine: EngineFactory, tmp_path: Path
) -> None:
    engine = make_engine()
    vector = random_vector(engine, (1,))
    vector.check_model(ModelIdentity.of(engine.model, 4, "same weights, another path"))
    other = Engine.from_pretrained(
        build_tiny_checkpoint(tmp_path / "other", seed=5, hidden_size=64, layers=4), device="cpu"
    )
    with pytest.raises(DirectionError, match=r"extracted from 'tiny64'.*weights"):
        vector.check_model(ModelIdentity.of(other.model, 4, "other"))
    narrow = Engine.from_pretrained(build_tiny_checkpoint(tmp_path / "narrow"), device="cpu")
    with pytest.raises(DirectionError, match="hidden size 64 vs 32; 4 decoder layers vs 2"):
        vector.check_model(ModelIdentity.of(narrow.model, 2, "narrow"))


def test_malformed_direction_directories_are_named(
    make_engine: EngineFactory, tmp_path: Path
) -> None:
    with pytest.raises(DirectionError, match="is not a direction directory"):
        SteeringVector.load(tmp_path)
    vector = random_vector(make_engine(), (1,))
    directory = vector.save(tmp_path / "d")
    card = json.loads((directory / "card.json").read_text())
    card["layers"] = [1, 2]
    (directory / "card.json").write_text(json.dumps(card))
    with pytest.raises(DirectionError, match=r"tensors for layers \[1\] but the card lists"):
        SteeringVector.load(directory)
    (directory / "direction.safetensors").write_bytes(b"\x00" * 10)
    with pytest.raises(DirectionError, match="cannot read direction"):
        SteeringVector.load(directory)
    with pytest.raises(DirectionError, match="hidden size 64"):
        SteeringVector({1: torch.zeros(3)}, dataclasses.replace(vector.card))
