"""The seed's protocol defaults and the held-out check a steered run is read with."""

from __future__ import annotations

from pathlib import Path

import torch

from gapscope.app.sweep import SweepSpec
from gapscope.models.direction import DirectionCard, ModelIdentity, SteeringVector
from gapscope.steer.controls import control
from gapscope.steer.protocol import (
    EXTRACTION_FIRST_SEED,
    PROVE_ALPHAS,
    PROVE_CONTROLS,
    S2B_ALPHAS,
    Extraction,
    seed_overlap,
)

CONFIG = {"n_dim": 2, "query_size": 4, "domain": "categorical"}


def _card(seeds: tuple[int, ...], preset: str = "demo") -> DirectionCard:
    return DirectionCard(
        model=ModelIdentity("m", None, 4, 2, "0" * 16),
        layers=(1,),
        norms={1: 1.0},
        preset=preset,
        seeds=seeds,
        extra={"config": CONFIG},
    )


def test_a_default_extraction_is_held_out_from_the_evaluated_seeds() -> None:
    card = _card(tuple(range(EXTRACTION_FIRST_SEED, EXTRACTION_FIRST_SEED + 4)))
    assert seed_overlap(card, range(4), "demo", CONFIG) == set()
    assert seed_overlap(card, range(1002, 1010), "demo", CONFIG) == {1002, 1003}


def test_only_the_same_episodes_overlap() -> None:
    card = _card((0, 1, 2, 3))  # `steer extract` used to start at seed 0
    assert seed_overlap(card, range(4), "demo", CONFIG) == {0, 1, 2, 3}
    assert seed_overlap(card, range(4), "demo", {**CONFIG, "query_size": 8}) == set()
    assert seed_overlap(card, range(4), "cat-10shot") == set()  # no config known: the preset
    assert seed_overlap(card, [3], None) == {3}  # unknown: shown, not hidden
    # the record a steered run writes reads back to the same answer
    record = Extraction.of(card).to_json()
    assert seed_overlap(Extraction.from_json(record), [1, 9], "demo", CONFIG) == {1}


def test_a_control_keeps_the_extraction_of_its_direction() -> None:
    card = _card((7, 8))
    vector = SteeringVector({1: torch.ones(4)}, card)
    assert Extraction.of(control(vector, "random").card) == Extraction.of(card)


def test_sweep_grids_default_to_the_seeds_figures(tmp_path: Path) -> None:
    s2b = SweepSpec(model="m", out=tmp_path)
    assert (s2b.alphas, s2b.controls) == (S2B_ALPHAS, ("orthogonal", "random"))
    assert S2B_ALPHAS == (-4.0, -3.0, -2.0, -1.0, 0.0, 1.0)
    prove = SweepSpec(model="m", out=tmp_path, diagnostic="prove", task_args={"dataset": "d"})
    assert (prove.alphas, prove.controls) == (PROVE_ALPHAS, PROVE_CONTROLS)
    assert (PROVE_ALPHAS, PROVE_CONTROLS) == ((-3.0, 0.0, 1.0), ("random",))
    chosen = SweepSpec(model="m", out=tmp_path, alphas=(-1.0,), controls=())
    assert (chosen.alphas, chosen.controls) == ((-1.0,), ())
    assert s2b.extract_first_seed == EXTRACTION_FIRST_SEED == 1000
    assert s2b.corruption == "wrong-decision"
