"""Options several commands share: ``--executor`` & co. of every Lean-backed ``gapscope run``,
``--allow-unsandboxed`` of every command that runs model-written code,
and the S2B-LM episode overrides (``--set``) of ``run s2b``, ``episodes`` and ``steer``.

Help texts are rich markup (typer renders them so): ``\\[`` keeps a literal bracket.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any

import typer

ExecutorOption = Annotated[
    str,
    typer.Option(
        "--executor",
        help="Where Lean checks run: local (a REPL pool here) or ray (Ray actors; needs "
        "pip install 'gapscope\\[ray]').",
    ),
]
RayAddressOption = Annotated[
    str | None,
    typer.Option(
        "--ray-address",
        help="With --executor ray: auto, ray://HOST:PORT, or unset to start Ray here.",
    ),
]
RayActorsOption = Annotated[
    int | None,
    typer.Option("--ray-actors", min=1, help="With --executor ray: actors (default: one per CPU)."),
]
AllowUnsandboxedOption = Annotated[
    bool,
    typer.Option(
        "--allow-unsandboxed",
        help="Run the model's code (Lean; Python in the code pilot) without the bubblewrap "
        "sandbox when it is missing (refused otherwise: install bubblewrap). Only for code "
        "you trust.",
    ),
]

Overrides = Annotated[
    list[str] | None,
    typer.Option("--set", "-S", help="Override an episode parameter, e.g. -S k_shot=5."),
]


def parse_overrides(pairs: list[str] | None) -> dict[str, Any]:
    """``key=value`` pairs -> S2BConfig overrides, converted to each field's type."""
    from gapscope.s2b.config import S2BConfig

    defaults = S2BConfig()
    types = {f.name: type(getattr(defaults, f.name)) for f in dataclasses.fields(defaults)}
    out: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep:
            raise typer.BadParameter(f"expected key=value, got {pair!r}", param_hint="--set")
        if key not in types:
            raise typer.BadParameter(
                f"unknown parameter {key!r}; known: {', '.join(sorted(types))}",
                param_hint="--set",
            )
        try:
            out[key] = types[key](value)
        except ValueError:
            raise typer.BadParameter(
                f"{key} expects {types[key].__name__}, got {value!r}", param_hint="--set"
            ) from None
    return out
