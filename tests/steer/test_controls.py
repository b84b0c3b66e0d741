"""The two controls: independent of each other, orthogonal (or not) to v, norms matched."""

from __future__ import annotations

import pytest
import torch

from gapscope.models.direction import DirectionCard, ModelIdentity, SteeringVector
from gapscope.steer.controls import CONTROL_STREAMS, control

WIDTH = 4096
LAYERS = tuple(range(23, 30))  # the last quarter of a 30-layer, 4096-wide model: seven layers


def _clb() -> SteeringVector:
    generator = torch.Generator().manual_seed(0)
    directions = {
        layer: (1.0 + layer) * torch.randn(WIDTH, generator=generator) for layer in LAYERS
    }
    card = DirectionCard(
        model=ModelIdentity("m", None, WIDTH, 30, "0" * 16),
        layers=LAYERS,
        norms={layer: float(v.norm()) for layer, v in directions.items()},
    )
    return SteeringVector(directions, card)


def _cos(a: torch.Tensor, b: torch.Tensor) -> float:
    a, b = a.double(), b.double()
    return float(a @ b / (a.norm() * b.norm()))


def test_orthogonal_and_random_controls_are_independent_draws() -> None:
    clb = _clb()
    orthogonal, random = control(clb, "orthogonal", seed=7), control(clb, "random", seed=7)
    for layer in LAYERS:
        v = clb.directions[layer]
        o, r = orthogonal.directions[layer], random.directions[layer]
        assert abs(_cos(o, r)) < 0.1, layer  # one shared draw for both gave 0.9992
        assert abs(_cos(o, v)) < 1e-6, layer
        assert abs(_cos(r, v)) < 0.1, layer
        for c in (o, r):  # the norm of v, layer by layer
            assert float(c.norm()) == pytest.approx(float(v.norm()), rel=1e-5)


def test_each_control_card_names_its_stream_and_reproduces() -> None:
    clb = _clb()
    for kind in ("orthogonal", "random"):
        first, again = control(clb, kind, seed=3), control(clb, kind, seed=3)
        assert first.card.control_stream == CONTROL_STREAMS[kind]
        assert (first.card.kind, first.card.control_seed) == (kind, 3)
        assert first.fingerprint == again.fingerprint
        assert first.fingerprint != control(clb, kind, seed=4).fingerprint
    assert CONTROL_STREAMS["orthogonal"] != CONTROL_STREAMS["random"]
