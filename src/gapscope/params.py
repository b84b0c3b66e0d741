"""Checks of a task's parameters, made inside every ``@task`` function.

``inspect eval gapscope/x -T seeds=abc`` hands the task function whatever the command line
held (a string the YAML reader could not make a number), and a plain ``int`` parameter would
fail much later in a ``TypeError`` naming nothing the user typed. ``gapscope run`` calls the
same functions, so a bound checked here holds for both, and the message names the parameter.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from enum import StrEnum
from typing import TypeVar

MAX_GENERATIONS = 1_000_000
"""The most model generations one run may ask for: beyond it a typo (``-k 1000000000``)
spent a minute building samples and ended in a MemoryError."""


def _number(name: str, value: object, kind: type[int] | type[float]) -> int | float:
    if isinstance(value, bool):  # True is an int to Python, not a count to a user
        raise ValueError(f"{name} must be a number, got {value!r}")
    if isinstance(value, str):
        try:
            value = kind(value)
        except ValueError:
            raise ValueError(f"{name} must be a number, got {value!r}") from None
    if kind is int and isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int if kind is int else (int, float)):
        what = "a whole number" if kind is int else "a number"
        raise ValueError(f"{name} must be {what}, got {value!r}")
    return value


def whole(name: str, value: object, low: int | None = None, high: int | None = None) -> int:
    """``value`` as an int in ``[low, high]``, or a ValueError naming ``name``."""
    number = int(_number(name, value, int))
    if (low is not None and number < low) or (high is not None and number > high):
        raise ValueError(f"{name} must be {_range(low, high)}, got {number}")
    return number


def real(
    name: str,
    value: object,
    low: float | None = None,
    high: float | None = None,
    *,
    above: bool = False,
) -> float:
    """``value`` as a finite float in ``[low, high]`` (``(low, high]`` with ``above``)."""
    number = float(_number(name, value, float))
    below_low = low is not None and (number <= low if above else number < low)
    if not math.isfinite(number) or below_low or (high is not None and number > high):
        bounds = _range(low, high, above=above)
        raise ValueError(f"{name} must be a finite number {bounds}, got {number}")
    return number


Choice = TypeVar("Choice", bound=StrEnum)


def choices(
    what: str,
    spec: str,
    kind: type[Choice],
    named: Mapping[str, tuple[Choice, ...]] | None = None,
) -> tuple[Choice, ...]:
    """A comma list of ``kind``'s values (``C1,S0``), or one of the ``named`` sets (``all``).

    An empty list or a name ``kind`` does not have is a ValueError saying ``what`` was unknown
    and every choice there is, so a typo in a ``-T`` option names the fix.
    """
    sets = dict(named or {})
    if spec in sets:
        return sets[spec]
    names = [s.strip() for s in spec.split(",") if s.strip()]
    valid = {member.value: member for member in kind}
    unknown = [n for n in names if n not in valid]
    if unknown or not names:
        listed = [*valid, *(f"'{name}'" for name in sets)]
        options = ", ".join(listed[:-1]) + f" or {listed[-1]}" if sets else ", ".join(listed)
        raise ValueError(f"unknown {what} {unknown or spec!r}; choose from {options}")
    return tuple(valid[n] for n in names)


def _range(low: float | None, high: float | None, *, above: bool = False) -> str:
    if low is not None and high is not None:
        return f"in {'(' if above else '['}{low:g}, {high:g}]"
    if low is not None:
        return f"{'>' if above else '>='} {low:g}"
    return f"<= {high:g}" if high is not None else "a number"


def generations(count: int, what: str) -> None:
    """Refuse a run of more than :data:`MAX_GENERATIONS` generations (``what`` says how the
    count arose, e.g. ``"24 probes x k=1000000000"``)."""
    if count > MAX_GENERATIONS:
        raise ValueError(
            f"{what} = {count:,} generations, more than the {MAX_GENERATIONS:,} one run may ask"
            " for; lower the count"
        )
