"""Fixtures: a tiny random Llama (4 layers, hidden 64) and engines over it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from gapscope.models.direction import DirectionCard, ModelIdentity, SteeringVector
from gapscope.models.engine import Engine, EngineConfig
from tests.models.tiny import build_tiny_checkpoint

HIDDEN, LAYERS = 64, 4
EngineFactory = Callable[..., Engine]


@pytest.fixture(scope="session")
def tiny64(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_checkpoint(
        tmp_path_factory.mktemp("tiny64"), hidden_size=HIDDEN, layers=LAYERS
    )


@pytest.fixture
def make_engine(tiny64: Path) -> EngineFactory:
    def make(**config: object) -> Engine:
        return Engine.from_pretrained(
            tiny64,
            device="cpu",
            config=EngineConfig(**config),  # type: ignore[arg-type]
        )

    return make


def random_vector(engine: Engine, layers: tuple[int, ...], seed: int = 0) -> SteeringVector:
    """A direction of norm 2 per layer for ``engine``'s model, with a valid card."""
    generator = torch.Generator().manual_seed(seed)
    directions = {}
    for layer in layers:
        v = torch.randn(HIDDEN, generator=generator)
        directions[layer] = 2.0 * v / v.norm()
    identity = ModelIdentity.of(engine.model, len(engine.decoder_layers()), "tiny64")
    card = DirectionCard(
        model=identity, layers=layers, norms={k: float(v.norm()) for k, v in directions.items()}
    )
    return SteeringVector(directions, card)
