"""The seed's steering protocol as named defaults, and the check that an evaluation is held out.

Kept free of torch so the command line and the report can read it without loading a model.

* Grids: the S2B-LM dosage curve sweeps alpha from -4 to +1 with both controls (Figure 5);
  the miniF2F transfer runs the baseline, suppression at -3 and amplification at +1 with the
  random control only (Figures 6-7). Each diagnostic's steering target names its grid
  (``gapscope.analysis.table``); any other grid is a parameter.
* Extraction seeds: a direction is extracted from episodes ``EXTRACTION_FIRST_SEED``.. while
  S2B-LM evaluates from seed 0, so no evaluated query game was teacher-forced during the
  extraction. :func:`seed_overlap` names the seeds where a run breaks that rule.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gapscope.models import DirectionCard

S2B_ALPHAS: tuple[float, ...] = (-4.0, -3.0, -2.0, -1.0, 0.0, 1.0)
"""The dosage curve's alphas (seed, Figure 5: "swept from -4 to +1")."""
S2B_CONTROLS: tuple[str, ...] = ("orthogonal", "random")
PROVE_ALPHAS: tuple[float, ...] = (-3.0, 0.0, 1.0)
"""The transfer's alphas (seed, Figures 6-7: baseline, suppression -3, amplification +1)."""
PROVE_CONTROLS: tuple[str, ...] = ("random",)
"""The transfer's control (seed: "random controls (alpha in {-3, +1})")."""

EXTRACTION_FIRST_SEED = 1000
"""First episode seed of a default extraction: far from the evaluated seeds 0, 1, 2, ..."""


@dataclass(frozen=True)
class Extraction:
    """Which S2B-LM episodes a direction was read from: the preset, the seeds and, when
    known, the resolved episode configuration (a seed builds the same episode only under the
    same configuration)."""

    preset: str | None
    seeds: tuple[int, ...]
    config: Mapping[str, Any] | None = None

    @classmethod
    def of(cls, card: DirectionCard) -> Extraction:
        config = card.extra.get("config")
        return cls(card.preset, tuple(card.seeds), config if isinstance(config, Mapping) else None)

    def to_json(self) -> dict[str, Any]:
        return {"preset": self.preset, "seeds": list(self.seeds), "config": self.config}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Extraction:
        config = data.get("config")
        return cls(
            data.get("preset"),
            tuple(int(s) for s in data.get("seeds", ())),
            config if isinstance(config, Mapping) else None,
        )


def _plain(config: Mapping[str, Any]) -> Any:
    """The configuration as JSON reads it back (tuples become lists), for comparison."""
    return json.loads(json.dumps(config, sort_keys=True, default=str))


def seed_overlap(
    card: DirectionCard | Extraction,
    evaluated_seeds: Iterable[int],
    preset: str | None,
    config: Mapping[str, Any] | None = None,
) -> set[int]:
    """The evaluated episode seeds the direction was extracted from.

    An episode is the same only under the same configuration: with both configurations known
    they decide; otherwise the preset names decide (an unknown preset on either side is
    taken to match, so a warning errs towards being shown). Empty when the run is held out.
    """
    extraction = card if isinstance(card, Extraction) else Extraction.of(card)
    if config is not None and extraction.config is not None:
        same = _plain(config) == _plain(extraction.config)
    else:
        same = preset is None or extraction.preset is None or preset == extraction.preset
    return set(evaluated_seeds) & set(extraction.seeds) if same else set()
