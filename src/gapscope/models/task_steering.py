"""Steering inside Inspect tasks: the ``steer``/``alpha`` task options of ``s2b`` and ``prove``.

A task names a direction directory; each model call made under :func:`steered` loads it
once (cached by path and modification time), checks it against the model that will serve the
call, and installs the hooks. Only models whose weights run in this process can be steered:
``gapscope/embedded`` and ``gapscope/hf/<checkpoint>``; any other model string is refused with
that advice rather than silently run unsteered.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from inspect_ai.model import Model, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

if TYPE_CHECKING:  # torch loads only when a task really steers
    from gapscope.models.direction import ModelIdentity, SteeringVector
    from gapscope.models.engine import Engine


class SteeringUnsupported(ValueError):
    """The task's model has no local weights to hook."""


class SteeringRecord(TypedDict):
    """A steered run's provenance in its log's metadata (``steering``)."""

    kind: str
    fingerprint: str
    base: str
    alpha: float
    layers: list[int]
    control_seed: int | None
    control_stream: int | None
    corruption: str | None
    extraction: dict[str, Any]
    """The episodes the direction was read from (``preset``, ``seeds``, ``config``), read back by
    :class:`gapscope.steer.protocol.Extraction` to mark a point that is not held out."""


def check_options(steer: str | None, alpha: float) -> SteeringRecord | None:
    """Validate the task options up front (a missing directory fails before any model call).

    Returns the direction's provenance for the log's metadata (None when nothing is steered):
    its kind, its fingerprint, and ``base``, the CLB direction it belongs to (its own
    fingerprint, or the one a control was drawn for). The analysis layer groups steered logs
    into dosage curves by ``base``, so a curve survives the direction files being moved, and
    reads ``extraction`` (the episodes the direction came from) to mark a point evaluated on
    them (:func:`gapscope.steer.protocol.seed_overlap`).
    """
    if not math.isfinite(alpha):
        raise ValueError(f"alpha must be a finite number, got {alpha}")
    if steer is None:
        return None
    vector = load_direction(steer)
    card = vector.card
    config = card.extra.get("config")
    return SteeringRecord(
        kind=card.kind,
        fingerprint=vector.fingerprint,
        base=str(card.extra.get("control_of", vector.fingerprint)),
        alpha=alpha,
        layers=list(vector.layers),
        control_seed=card.control_seed,
        control_stream=card.control_stream,
        corruption=card.corruption,
        extraction={
            "preset": card.preset,
            "seeds": list(card.seeds),
            "config": config if isinstance(config, dict) else None,
        },
    )


def load_direction(path: str) -> SteeringVector:
    """The direction stored at ``path`` (cached until the files change)."""
    directory = Path(path).expanduser()
    card = directory / "card.json"
    stamp = card.stat().st_mtime_ns if card.is_file() else -1
    return _load(str(directory.resolve()), stamp)


@functools.lru_cache(maxsize=16)
def _load(directory: str, stamp: int) -> SteeringVector:
    from gapscope.models.direction import SteeringVector

    return SteeringVector.load(Path(directory))


LOCAL_PREFIX = "gapscope/"


def engine_for(model: str) -> Engine:
    """The in-process engine behind a ``gapscope/...`` model string (the one Inspect's provider
    will share, default model args); any other model string cannot be hooked."""
    if not model.startswith(LOCAL_PREFIX):
        raise SteeringUnsupported(
            f"steering needs local weights: use gapscope/hf/<checkpoint> or gapscope/embedded, "
            f"not {model!r} (API and vLLM models run their layers elsewhere)"
        )
    from gapscope.models.inspect_api import ModelArgs, model_source, shared_engine

    return shared_engine(model_source(model[len(LOCAL_PREFIX) :]), ModelArgs())


def model_identity(model: Model) -> ModelIdentity:
    """Who ``model`` is, for the card check; refuses models without local weights."""
    engine = getattr(model.api, "engine", None)
    if engine is None:
        raise SteeringUnsupported(
            "steering needs a model whose weights run in this process, use "
            f"gapscope/hf/<checkpoint> or gapscope/embedded; {model.name!r} "
            f"({type(model.api).__name__}) is served elsewhere"
        )
    return _identity(engine, str(model))


@functools.lru_cache(maxsize=8)
def _identity(engine: object, model_id: str) -> ModelIdentity:
    from gapscope.models.direction import ModelIdentity

    return ModelIdentity.of(engine.model, len(engine.decoder_layers()), model_id)  # type: ignore[attr-defined]


@contextlib.contextmanager
def steered(steer: str | None, alpha: float) -> Iterator[None]:
    """Steer the model calls made in the body, after checking the direction fits the model."""
    if not math.isfinite(alpha):
        raise ValueError(f"alpha must be a finite number, got {alpha}")
    if steer is None or alpha == 0:
        yield
        return
    from gapscope.models.steering import steering

    vector = load_direction(steer)
    vector.check_model(model_identity(get_model()))
    with steering(vector, alpha):
        yield


@solver
def steered_generate(steer: str | None = None, alpha: float = 0.0) -> Solver:
    """Inspect's ``generate`` step, under ``steered(steer, alpha)``."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        with steered(steer, alpha):
            return await generate(state, tool_calls="none")  # no tools: one call

    return solve


__all__ = [
    "SteeringUnsupported",
    "check_options",
    "engine_for",
    "load_direction",
    "steered",
    "steered_generate",
]
