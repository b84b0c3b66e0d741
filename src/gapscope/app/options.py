"""Options several commands share: ``--executor`` & co. of every Lean-backed ``gapscope run``,
``--allow-unsandboxed`` of every command that runs model-written code, the bounds on a served
model's requests (``--timeout``, ``--attempt-timeout``, ``--max-retries``) of ``profile`` and
every ``run`` command (:func:`with_request_bounds`), and the S2B-LM episode overrides
(``--set``) of ``run s2b``, ``episodes`` and ``steer``.

Help texts are rich markup (typer renders them so): ``\\[`` keeps a literal bracket.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable
from contextvars import ContextVar
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

TIMEOUT_HELP = "Seconds one request to a served model may take, retries included."
ATTEMPT_TIMEOUT_HELP = (
    "Seconds one attempt of a request may take before it is abandoned and retried "
    "(default: 4x the token cap at the preflight's measured speed, at least 300); the "
    "preflight waits as long (default 120 s)."
)
MAX_RETRIES_HELP = "Retries of a request the server failed (HTTP 5xx, 429, a dropped connection)."
TimeoutOption = Annotated[int, typer.Option("--timeout", min=1, help=TIMEOUT_HELP)]
AttemptTimeoutOption = Annotated[
    int | None, typer.Option("--attempt-timeout", min=1, help=ATTEMPT_TIMEOUT_HELP)
]
MaxRetriesOption = Annotated[int, typer.Option("--max-retries", min=0, help=MAX_RETRIES_HELP)]


def generation_limits(
    timeout: int = DEFAULT_TIMEOUT_S,
    attempt_timeout: int | None = None,
    max_retries: int = DEFAULT_MAX_RETRIES,
) -> dict[str, int]:
    """The Inspect ``GenerateConfig`` fields the three options set (an attempt timeout not
    given is computed per task: ``preflight.request_bounds``)."""
    limits = {"timeout": timeout, "max_retries": max_retries}
    return limits | ({"attempt_timeout": attempt_timeout} if attempt_timeout else {})


GENERATION: ContextVar[dict[str, int] | None] = ContextVar("generation", default=None)
"""The bounds on a served model's requests for this invocation, as ``gapscope run --timeout
...`` or ``gapscope run NAME --timeout ...`` gave them (None: the defaults above)."""

_BOUND_OPTIONS = {
    "timeout": Annotated[int | None, typer.Option("--timeout", min=1, help=TIMEOUT_HELP)],
    "attempt_timeout": Annotated[
        int | None, typer.Option("--attempt-timeout", min=1, help=ATTEMPT_TIMEOUT_HELP)
    ],
    "max_retries": Annotated[
        int | None, typer.Option("--max-retries", min=0, help=MAX_RETRIES_HELP)
    ],
}


def with_request_bounds(command: Callable[..., Any]) -> Callable[..., Any]:
    """``command`` taking ``--timeout``, ``--attempt-timeout`` and ``--max-retries`` too, so
    ``gapscope run ladder-code --timeout 60`` works as ``gapscope run --timeout 60
    ladder-code`` does (there, after the diagnostic's name, they win). What is given is set in
    :data:`GENERATION`, which :func:`gapscope.app.kit.run_diagnostic` reads; the command itself
    never sees them."""

    @functools.wraps(command)
    def bounded(*args: Any, **kwargs: Any) -> Any:
        given = {name: kwargs.pop(name, None) for name in _BOUND_OPTIONS}
        chosen = {name: value for name, value in given.items() if value is not None}
        GENERATION.set((GENERATION.get() or generation_limits()) | chosen)
        return command(*args, **kwargs)

    signature = inspect.signature(command, eval_str=True)  # typer reads these annotations
    extra = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=kind)
        for name, kind in _BOUND_OPTIONS.items()
    ]
    bounded.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[*signature.parameters.values(), *extra]
    )
    bounded.__annotations__ = {**command.__annotations__, **_BOUND_OPTIONS}
    return bounded
