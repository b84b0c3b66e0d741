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
    from gapscope.s2b import S2BConfig

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


DEFAULT_TIMEOUT_S = 900
DEFAULT_MAX_RETRIES = 3
MIN_ATTEMPT_TIMEOUT_S = 300
ATTEMPT_SLACK = 4
"""The bounds on a served model's requests (Inspect's ``timeout``, ``attempt_timeout`` and
``max_retries``; Inspect's own default is to retry forever). A server that refuses or fails
every request ends each one after 4 attempts, about 30 s of Inspect's exponential backoff
(3, 6, 12 s with up to 3 s jitter each), and the preflight reports it before any sample. An
attempt is abandoned after ``ATTEMPT_SLACK`` times what the task's token cap takes at the
preflight's measured speed with every connection busy, and never before
``MIN_ATTEMPT_TIMEOUT_S`` (``preflight.request_bounds``): a slow local server is not mistaken
for a stalled one, and one that stops answering mid-reply is. gapscope's own engine
(``gapscope/…``) and other in-process models get none of these: they cannot be down, and a
long CPU generation is not a stall."""

TimeoutOption = Annotated[
    int,
    typer.Option(
        "--timeout",
        min=1,
        help="Seconds one request to a served model may take, retries included.",
    ),
]
AttemptTimeoutOption = Annotated[
    int | None,
    typer.Option(
        "--attempt-timeout",
        min=1,
        help="Seconds one attempt of a request may take before it is abandoned and retried "
        "(default: 4x the token cap at the preflight's measured speed, at least 300).",
    ),
]
MaxRetriesOption = Annotated[
    int,
    typer.Option(
        "--max-retries",
        min=0,
        help="Retries of a request the server failed (HTTP 5xx, 429, a dropped connection).",
    ),
]


def generation_limits(
    timeout: int = DEFAULT_TIMEOUT_S,
    attempt_timeout: int | None = None,
    max_retries: int = DEFAULT_MAX_RETRIES,
) -> dict[str, int]:
    """The Inspect ``GenerateConfig`` fields the three options set (an attempt timeout not
    given is computed per task: ``preflight.request_bounds``)."""
    limits = {"timeout": timeout, "max_retries": max_retries}
    return limits | ({"attempt_timeout": attempt_timeout} if attempt_timeout else {})
