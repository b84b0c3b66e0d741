"""Speed targets a benchmark states, and the exit status of ``make bench`` that they decide.

A benchmark's ``main`` may return the targets it measured (a ratio against a same-run
baseline and the least value it must reach). The runner prints every target once more at
the end and exits non-zero when a required one was missed, so a regression fails
``make bench`` rather than scrolling past. A goal (``required=False``) is reported, never
failed on: for aims the project states but does not gate on yet. A benchmark that cannot run
here (no CUDA, no Ray, no llama.cpp, too slow for the default run) returns a ``Skipped`` with
its reason; the runner counts and lists them at the end, so a skip is never silent.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    """``value`` (a same-run ratio) must be at least ``minimum``."""

    name: str
    value: float
    minimum: float
    required: bool = True

    @property
    def met(self) -> bool:
        return self.value >= self.minimum

    def line(self) -> str:
        verdict = "met" if self.met else ("MISSED" if self.required else "missed (goal)")
        kind = "target" if self.required else "goal"
        return f"{kind} {self.name}: {self.value:.2f} >= {self.minimum:.2f}: {verdict}"


def missed(targets: Iterable[Target]) -> list[Target]:
    """The required targets that were not met."""
    return [target for target in targets if target.required and not target.met]


def at_most(name: str, ratio: float, ceiling: float, required: bool = True) -> Target:
    """A ratio that must stay at or under ``ceiling`` (a slowdown against the baseline), stated
    as its headroom ``ceiling / ratio``, which must reach 1: every target then reads "at least".
    A ratio of zero or less (a cost measured beyond what is set apart, such as the verifier's
    time past its deadlines, that came out below it) is within any ceiling: headroom infinite,
    not negative."""
    headroom = ceiling / ratio if ratio > 0 else math.inf
    return Target(f"{name}: {ratio:.2f}x, at most {ceiling:g}x (headroom)", headroom, 1.0, required)


@dataclass(frozen=True)
class Skipped:
    """A benchmark (or one arm of it) that did not run here, and why."""

    name: str
    reason: str

    def line(self) -> str:
        return f"SKIPPED: {self.name}: {self.reason}"


def skipped(name: str, reason: str) -> Skipped:
    """Say the skip where it happens (visible in the benchmark's own output) and return it."""
    skip = Skipped(name, reason)
    print(skip.line())
    return skip
