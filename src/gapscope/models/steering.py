"""Adding ``alpha * v`` to the residual stream, through ``gapscope.models.hooks``.

The addition happens on the output of each recorded decoder layer, at every position the
layer computes: prompt tokens and generated tokens alike (seed: "added to the residual stream
at each token"). Padded positions receive it too; they are masked out of attention, so that
changes nothing a real token sees.

Two properties the engine relies on:
* equal steering -> equal hooks. The hook functions for one (direction, alpha) are built once
  and reused, so concurrent requests steered the same way share a ``HookSet`` and therefore a
  batch, and they share a KV-cache namespace keyed by the direction's fingerprint and alpha.
  Steered and unsteered requests, or two alphas, never share cached keys/values, but they
  may share a forward pass: the hooks are ``AddToOutput``, which the engine merges into one
  per-row addition (``gapscope.models.hooks.RowAdditions``).
* alpha = 0 installs nothing: the request is the unsteered request, byte for byte, and reuses
  the unsteered KV cache.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Iterator

from gapscope.models.direction import SteeringVector
from gapscope.models.hooks import AddToOutput, HookFn, HookSet, HookTarget, forward_hooks

_HOOKS: dict[tuple[str, float], tuple[tuple[HookTarget, HookFn], ...]] = {}
_HOOKS_LOCK = threading.Lock()
_MAX_MEMO = 64
"""Hook sets kept for reuse (a dosage sweep needs one per direction and alpha)."""


def steering_hooks(vector: SteeringVector, alpha: float) -> tuple[tuple[HookTarget, HookFn], ...]:
    """The (layer, hook) pairs adding ``alpha * v``; the same objects for equal arguments."""
    if not math.isfinite(alpha):
        raise ValueError(f"alpha must be a finite number, got {alpha}")
    key = (vector.fingerprint, float(alpha))
    with _HOOKS_LOCK:
        hooks = _HOOKS.get(key)
        if hooks is None:
            hooks = tuple(
                (layer, AddToOutput(alpha * vector.directions[layer])) for layer in vector.layers
            )
            if len(_HOOKS) >= _MAX_MEMO:
                _HOOKS.pop(next(iter(_HOOKS)))
            _HOOKS[key] = hooks
        return hooks


def cache_key(vector: SteeringVector, alpha: float) -> str:
    """The KV-cache namespace of requests steered by ``vector`` at ``alpha``."""
    return f"steer:{vector.fingerprint}:{float(alpha)!r}"


@contextlib.contextmanager
def steering(vector: SteeringVector | None, alpha: float) -> Iterator[HookSet | None]:
    """Steer every generate call made inside this context by ``alpha * vector``.

    ``vector=None`` or ``alpha == 0`` steers nothing (yields None). Check the vector against
    the model first (``vector.check_model``) when the model is known.
    """
    if vector is None or alpha == 0:
        if not math.isfinite(alpha):
            raise ValueError(f"alpha must be a finite number, got {alpha}")
        yield None
        return
    with forward_hooks(steering_hooks(vector, alpha), cache_key=cache_key(vector, alpha)) as hs:
        yield hs
