"""Control directions: same norm as v at every layer, but not v.

* ``orthogonal``: a seeded Gaussian vector with its component along v removed, rescaled to
  ||v|| (seed: "a random vector projected to be orthogonal to v_CLB");
* ``random``: a seeded Gaussian vector rescaled to ||v|| (its expected cosine with v is 0,
  but it is not forced to be).

The two are independent draws: each kind has its own random stream (``CONTROL_STREAMS``), and
the draw for layer l of kind k is ``numpy.random.default_rng([seed, stream(k), l])``. With one
stream for both, the random control would be the orthogonal one plus its small component
along v, i.e. the same direction (|cos| = 1), and the two controls one control. A control is
reproducible from its card (kind, ``control_seed``, ``control_stream``). Arithmetic is float64;
the result is stored as float32 like v.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch
from torch import Tensor

from gapscope.models import SteeringVector

CONTROLS = ("orthogonal", "random")
CONTROL_STREAMS = {"orthogonal": 1, "random": 2}
"""The random stream of each control kind (the middle word of the generator's seed)."""


def _gaussian(width: int, seed: int, stream: int, layer: int) -> Tensor:
    rng = np.random.default_rng([seed, stream, layer])
    return torch.from_numpy(rng.standard_normal(width))


def _control_layer(kind: str, v: Tensor, seed: int, layer: int) -> Tensor:
    base = v.double()
    draw = _gaussian(base.numel(), seed, CONTROL_STREAMS[kind], layer)
    if kind == "orthogonal":
        unit = base / base.norm()
        draw = draw - (draw @ unit) * unit
        draw = draw - (draw @ unit) * unit  # a second pass removes float64 residue
    scaled: Tensor = draw * (base.norm() / draw.norm())
    return scaled.float()


def control(vector: SteeringVector, kind: str, seed: int = 0) -> SteeringVector:
    """The ``kind`` control of ``vector`` (``orthogonal`` or ``random``), seeded."""
    if kind not in CONTROLS:
        raise ValueError(f"control must be one of {', '.join(CONTROLS)}, got {kind!r}")
    zero = [layer for layer, v in vector.directions.items() if float(v.norm()) == 0.0]
    if zero:
        raise ValueError(f"direction has zero norm at layers {zero}: no control can match it")
    directions = {
        layer: _control_layer(kind, v, seed, layer) for layer, v in vector.directions.items()
    }
    card = dataclasses.replace(
        vector.card,
        kind=kind,
        control_seed=seed,
        control_stream=CONTROL_STREAMS[kind],
        norms={layer: float(v.norm()) for layer, v in directions.items()},
        extra={**vector.card.extra, "control_of": vector.fingerprint},
    )
    return SteeringVector(directions, card)
