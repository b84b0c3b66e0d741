"""The ``--executor`` options every Lean-backed ``gapscope run`` command shares.

Help texts are rich markup (typer renders them so): ``\\[`` keeps a literal bracket.
"""

from __future__ import annotations

from typing import Annotated

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
