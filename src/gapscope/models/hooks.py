"""Per-call forward hooks on the shared model.

Steering experiments need to modify activations for *some* generate calls while other
episodes run through the same model object concurrently. Registering hooks globally
would leak them into unrelated calls, so hooks are declared in a context
(`forward_hooks`, backed by a `ContextVar`) and the engine attaches them to the model
only for the duration of the batch that serves requests made inside that context.

A hook changes the keys/values the model computes, so KV-cache entries computed under
one set of hooks must never be reused under another. A `HookSet` therefore carries an
optional `cache_key`: requests with the same key share a cache namespace; with no key
the engine bypasses KV reuse entirely (always correct, just slower).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from torch import nn

HookTarget = int | str
"""A decoder-layer index (into `Engine.decoder_layers()`) or a dotted module path."""

HookFn = Callable[[nn.Module, tuple[Any, ...], Any], Any]
"""A standard torch forward hook: `(module, args, output) -> new_output | None`."""


@dataclass(frozen=True)
class HookSet:
    """The hooks active for a request, and the KV-cache namespace they may share."""

    hooks: tuple[tuple[HookTarget, HookFn], ...]
    cache_key: str | None = None


_ACTIVE: ContextVar[HookSet | None] = ContextVar("gapscope_forward_hooks", default=None)


def current_hooks() -> HookSet | None:
    """The hooks declared by the enclosing `forward_hooks` contexts, if any."""
    return _ACTIVE.get()


@contextmanager
def forward_hooks(
    hooks: Iterable[tuple[HookTarget, HookFn]], *, cache_key: str | None = None
) -> Iterator[HookSet]:
    """Apply `hooks` to every generate call made inside this context (and only those).

    `cache_key` names the hook configuration for KV-cache reuse: two requests may share
    cached keys/values only if their hooks produce identical activations, which the
    caller (who knows what the hooks do) must vouch for with equal keys. Without a key,
    requests made here never read or write the KV cache.

    Contexts nest: the inner set is the outer hooks plus the new ones; the cache key is
    the joined keys, or None if either level has none.
    """
    outer = _ACTIVE.get()
    new = tuple(hooks)
    if outer is None:
        combined = HookSet(new, cache_key)
    else:
        key = None
        if outer.cache_key is not None and cache_key is not None:
            key = f"{outer.cache_key}+{cache_key}"
        combined = HookSet(outer.hooks + new, key)
    token = _ACTIVE.set(combined)
    try:
        yield combined
    finally:
        _ACTIVE.reset(token)


def resolve_target(model: nn.Module, layers: Sequence[nn.Module], target: HookTarget) -> nn.Module:
    """Find the module a hook targets, with an error that says what exists."""
    if isinstance(target, int):
        if not -len(layers) <= target < len(layers):
            raise IndexError(
                f"hook target layer {target} is out of range: the model has {len(layers)} "
                "decoder layers"
            )
        return layers[target]
    try:
        return model.get_submodule(target)
    except AttributeError as error:
        raise ValueError(f"hook target {target!r} is not a submodule of the model") from error


@contextmanager
def attached(
    model: nn.Module, layers: Sequence[nn.Module], hook_set: HookSet | None
) -> Iterator[None]:
    """Register `hook_set` on `model` for the body of the `with`; always removed after."""
    with ExitStack() as stack:
        if hook_set is not None:
            for target, fn in hook_set.hooks:
                handle = resolve_target(model, layers, target).register_forward_hook(fn)
                stack.callback(handle.remove)
        yield
