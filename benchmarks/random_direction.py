"""A seeded random steering vector for any engine, for the benchmarks that time steering.

Steering costs the same whatever the direction, so a timing needs no extracted one: a Gaussian
direction on the last quarter of the layers (the paper's default span) with a valid card.
"""

from __future__ import annotations

import torch

from gapscope.models.direction import DirectionCard, ModelIdentity, SteeringVector
from gapscope.models.engine import Engine
from gapscope.steer.extract import parse_layers


def random_direction(engine: Engine, source: str) -> SteeringVector:
    """Seed-0 Gaussian directions for the last quarter of ``engine``'s layers; ``source`` names
    the model on the card."""
    n_layers = len(engine.decoder_layers())
    layers = parse_layers("last-quarter", n_layers)
    generator = torch.Generator().manual_seed(0)
    width = engine.model.config.hidden_size
    directions = {layer: torch.randn(width, generator=generator) for layer in layers}
    card = DirectionCard(
        model=ModelIdentity.of(engine.model, n_layers, source),
        layers=layers,
        norms={layer: float(v.norm()) for layer, v in directions.items()},
    )
    return SteeringVector(directions, card)
