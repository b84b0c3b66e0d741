"""Activation steering: the CLB direction (CAA) and its controls, the dosage statistics.

* ``pairs`` / ``extract``: correct vs corrupted S2B traces -> mean span activations -> v;
* ``controls``: seeded orthogonal and random directions of the same norm;
* ``dosage``: the grid's points, their bootstrap CIs and each direction's trend.

What steering *applies* lives on the models floor, so the S2B-LM and prove tasks can take a
direction without importing this package: :mod:`gapscope.models.direction` (the direction type
and its file format, safetensors + card), :mod:`gapscope.models.steering` (``steering(vector,
alpha)``: alpha * v on the residual stream through scoped forward hooks) and
:mod:`gapscope.models.task_steering` (the tasks' ``steer``/``alpha`` options). The sweep that
runs the grid and the commands are in :mod:`gapscope.app.sweep` and :mod:`gapscope.app.steer`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gapscope._face import lazy_face

if TYPE_CHECKING:
    from gapscope.steer.controls import CONTROLS, control
    from gapscope.steer.dosage import (
        BASELINE,
        CurvePoint,
        DoseCondition,
        Trend,
        curve_points,
        trend,
    )
    from gapscope.steer.extract import extract_direction
    from gapscope.steer.protocol import (
        EXTRACTION_FIRST_SEED,
        PROVE_ALPHAS,
        PROVE_CONTROLS,
        S2B_ALPHAS,
        S2B_CONTROLS,
        Extraction,
        seed_overlap,
    )

__all__ = [
    "BASELINE",
    "CONTROLS",
    "EXTRACTION_FIRST_SEED",
    "PROVE_ALPHAS",
    "PROVE_CONTROLS",
    "S2B_ALPHAS",
    "S2B_CONTROLS",
    "CurvePoint",
    "DoseCondition",
    "Extraction",
    "Trend",
    "control",
    "curve_points",
    "extract_direction",
    "seed_overlap",
    "trend",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "BASELINE": ".dosage",
        "CONTROLS": ".controls",
        "CurvePoint": ".dosage",
        "PROVE_ALPHAS": ".protocol",
        "PROVE_CONTROLS": ".protocol",
        "S2B_ALPHAS": ".protocol",
        "S2B_CONTROLS": ".protocol",
        "DoseCondition": ".dosage",
        "EXTRACTION_FIRST_SEED": ".protocol",
        "Extraction": ".protocol",
        "Trend": ".dosage",
        "control": ".controls",
        "curve_points": ".dosage",
        "extract_direction": ".extract",
        "seed_overlap": ".protocol",
        "trend": ".dosage",
    },
)
