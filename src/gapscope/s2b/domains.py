"""Stimulus domains: how a latent value index becomes something the listener reads.

Two domains share one interface. The categorical domain (S2B-LM) shows each latent value as a
familiar word whose *role* is fresh every episode; the SCS domain (original S2B) shows a float
drawn from the Gaussian of the value's section of [-1, 1], which keeps the binding problem but
adds a numeracy confounder for language models.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Protocol

# Ten concept classes of ten items each (seed: "a fixed registry of ten concept classes ...
# each containing up to ten named items"). Items are single lowercase words so that a
# stimulus reads as a plain tuple and no item name contains another's separator.
# fmt: off
CATEGORY_REGISTRY: dict[str, tuple[str, ...]] = {
    "vegetables": (
        "carrot", "potato", "onion", "eggplant", "cabbage",
        "pepper", "spinach", "leek", "radish", "celery",
    ),
    "fruits": (
        "apple", "banana", "cherry", "mango", "pear",
        "plum", "grape", "lemon", "peach", "kiwi",
    ),
    "colors": (
        "red", "blue", "green", "yellow", "purple",
        "orange", "black", "white", "pink", "brown",
    ),
    "shapes": (
        "circle", "square", "triangle", "hexagon", "star",
        "oval", "diamond", "pentagon", "cross", "crescent",
    ),
    "animals": (
        "dog", "cat", "horse", "rabbit", "tiger",
        "eagle", "dolphin", "wolf", "turtle", "fox",
    ),
    "countries": (
        "france", "japan", "brazil", "kenya", "canada",
        "india", "norway", "peru", "egypt", "chile",
    ),
    "metals": (
        "iron", "copper", "gold", "silver", "zinc",
        "nickel", "tin", "lead", "cobalt", "titanium",
    ),
    "planets": (
        "mercury", "venus", "earth", "mars", "jupiter",
        "saturn", "uranus", "neptune", "pluto", "ceres",
    ),
    "sports": (
        "tennis", "soccer", "swimming", "rugby", "golf",
        "hockey", "boxing", "cycling", "rowing", "skiing",
    ),
    "instruments": (
        "piano", "violin", "guitar", "flute", "drum",
        "trumpet", "harp", "cello", "oboe", "banjo",
    ),
}
# fmt: on


class StimulusDomain(Protocol):
    """Renders latent value indices as the words or numbers a listener reads."""

    @property
    def name(self) -> str:
        """``categorical`` or ``scs``, as recorded in the episode header."""
        ...

    def render(self, values: tuple[int, ...], rng: random.Random) -> tuple[str, ...]:
        """One observation of the stimulus with latent ``values`` (one index per dimension)."""
        ...

    def value_label(self, dim: int, value: int) -> str:
        """A stable name for a latent value, used by the verbalizer's hypotheses."""
        ...

    def describe(self) -> dict[str, object]:
        """What an auditor needs to re-render the episode (categories and items, or means)."""
        ...


@dataclass(frozen=True)
class CategoricalDomain:
    """Dimension i shows the items of one concept class; value j is its j-th drawn item."""

    categories: tuple[str, ...]
    items: tuple[tuple[str, ...], ...]
    name: str = "categorical"

    @classmethod
    def sample(cls, structure: tuple[int, ...], rng: random.Random) -> CategoricalDomain:
        """N_dim classes without replacement, then d(i) items uniformly from class i."""
        categories = tuple(rng.sample(sorted(CATEGORY_REGISTRY), len(structure)))
        items = tuple(
            tuple(rng.sample(CATEGORY_REGISTRY[cat], d))
            for cat, d in zip(categories, structure, strict=True)
        )
        return cls(categories=categories, items=items)

    def render(self, values: tuple[int, ...], rng: random.Random) -> tuple[str, ...]:
        return tuple(self.items[dim][v] for dim, v in enumerate(values))

    def value_label(self, dim: int, value: int) -> str:
        return self.items[dim][value]

    def describe(self) -> dict[str, object]:
        return {"categories": list(self.categories), "items": [list(i) for i in self.items]}


@dataclass(frozen=True)
class SCSDomain:
    """Symbolic Continuous Stimulus: value j of dimension i is N(mu_j, sigma_j^2).

    [-1, 1] is split into d(i) equal sections; mu_j is the centre of section j and sigma_j a
    sixth of its width, so 99.7% of draws fall inside the section (the rest are clipped to
    [-1, 1]). Shape invariance: every stimulus is a vector in [-1, 1]^N_dim whatever d(i) is,
    so the structure cannot be read off one observation.
    """

    structure: tuple[int, ...]
    decimals: int = 2
    name: str = "scs"

    def _section(self, dim: int, value: int) -> tuple[float, float]:
        width = 2.0 / self.structure[dim]
        mu = -1.0 + width * (value + 0.5)
        return mu, width / 6.0

    def render(self, values: tuple[int, ...], rng: random.Random) -> tuple[str, ...]:
        out = []
        for dim, v in enumerate(values):
            mu, sigma = self._section(dim, v)
            x = min(1.0, max(-1.0, rng.gauss(mu, sigma)))
            out.append(f"{x:.{self.decimals}f}")
        return tuple(out)

    def value_label(self, dim: int, value: int) -> str:
        mu, _ = self._section(dim, value)
        return f"~{mu:.2f}"

    def describe(self) -> dict[str, object]:
        return {
            "means": [
                [round(self._section(dim, v)[0], 4) for v in range(d)]
                for dim, d in enumerate(self.structure)
            ],
            "sigmas": [round(2.0 / d / 6.0, 4) for d in self.structure],
        }
