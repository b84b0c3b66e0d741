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

Requests with different hooks normally need separate forward passes. One kind of hook is an
exception: :class:`AddToOutput` (a fixed vector added to a decoder layer's output, i.e.
steering). Requests whose hooks are all of that kind on decoder layers (or who have none) are
*additive*, and :class:`RowAdditions` serves any mix of them in one forward pass by adding a
per-row vector (zero for a row without one), so a dosage sweep's conditions share batches. A
row's arithmetic is the one it gets alone: ``hidden + delta`` with the same delta (and
``hidden + 0``, which is ``hidden``, for an unsteered row).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor, nn

HookTarget = int | str
"""A decoder-layer index (into `Engine.decoder_layers()`) or a dotted module path."""

HookFn = Callable[[nn.Module, tuple[Any, ...], Any], Any]
"""A standard torch forward hook: `(module, args, output) -> new_output | None`."""


@dataclass(frozen=True)
class HookSet:
    """The hooks active for a request, and the KV-cache namespace they may share."""

    hooks: tuple[tuple[HookTarget, HookFn], ...]
    cache_key: str | None = None


class AddToOutput:
    """A forward hook adding ``delta`` (``[hidden]``) to a decoder layer's hidden-state output.

    Decoder layers return either the hidden states or a tuple whose first item they are,
    depending on the transformers version; both are handled. ``delta`` is moved to the
    output's device and dtype once per (device, dtype). Compared by identity, like any hook.
    """

    def __init__(self, delta: Tensor) -> None:
        self.delta = delta
        self._placed: dict[tuple[torch.device, torch.dtype], Tensor] = {}

    def placed(self, like: Tensor) -> Tensor:
        """``delta`` on ``like``'s device and in its dtype (converted once)."""
        key = (like.device, like.dtype)
        if key not in self._placed:
            self._placed[key] = self.delta.to(device=like.device, dtype=like.dtype)
        return self._placed[key]

    def __call__(self, module: nn.Module, args: tuple[Any, ...], output: Any) -> Any:
        return _shifted(output, lambda hidden: hidden + self.placed(hidden))


def _shifted(output: Any, shift: Callable[[Tensor], Tensor]) -> Any:
    hidden = output[0] if isinstance(output, tuple) else output
    moved = shift(hidden)
    return (moved, *output[1:]) if isinstance(output, tuple) else moved


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


def is_additive(hook_set: HookSet | None) -> bool:
    """No hooks, or only :class:`AddToOutput`, at most one per decoder layer (by index from
    the first): such requests can share a forward pass (:class:`RowAdditions`). Two
    additions to one layer (nested contexts) are left to their own batches, where they are
    added one after the other, as the row alone would have them."""
    if hook_set is None:
        return True
    targets = [t for t, _ in hook_set.hooks]
    return len(set(targets)) == len(targets) and all(
        isinstance(t, int) and t >= 0 and isinstance(f, AddToOutput) for t, f in hook_set.hooks
    )


class RowAdditions:
    """Additive hook sets of the rows of one batch, merged into one hook per decoder layer
        that adds each row its own vector (``[rows, 1, hidden]``; zeros where a row adds
        nothing). ``select`` follows the batch when finished rows leave it, ``joining`` when
    waiting requests join it."""

    def __init__(self, hook_sets: Sequence[HookSet | None], n_layers: int) -> None:
        self._n_layers = n_layers
        self._per_row = [self._adds(hook_set) for hook_set in hook_sets]
        self._rows = list(range(len(self._per_row)))
        self._layers = frozenset(layer for adds in self._per_row for layer in adds)
        self._stacked: dict[tuple[int, torch.device, torch.dtype], Tensor] = {}

    def _adds(self, hook_set: HookSet | None) -> dict[int, AddToOutput]:
        if not is_additive(hook_set):
            raise ValueError("RowAdditions merges only additive hook sets")
        adds: dict[int, AddToOutput] = {}
        for target, fn in () if hook_set is None else hook_set.hooks:
            assert isinstance(target, int) and isinstance(fn, AddToOutput)
            if target >= self._n_layers:
                raise IndexError(
                    f"hook target layer {target} is out of range: the model has "
                    f"{self._n_layers} decoder layers"
                )
            adds[target] = fn
        return adds

    def accepts(self, hook_set: HookSet | None) -> bool:
        """Whether a row with ``hook_set`` can join: additive, and adding only to layers the
        merged hooks (attached when the batch started) already serve."""
        if not is_additive(hook_set):
            return False
        targets = {target for target, _ in (hook_set.hooks if hook_set else ())}
        return targets <= self._layers

    @contextmanager
    def joining(self, hook_sets: Sequence[HookSet | None]) -> Iterator[None]:
        """Serve only new rows with ``hook_sets`` inside the context (their own prefill pass);
        after it they are the batch's last rows (``select`` drops any that do not stay)."""
        if not all(self.accepts(hook_set) for hook_set in hook_sets):
            raise ValueError("a joining row adds to a layer the batch's hooks do not serve")
        first = len(self._per_row)
        self._per_row.extend(self._adds(hook_set) for hook_set in hook_sets)
        batch_rows, self._rows = self._rows, list(range(first, len(self._per_row)))
        self._stacked.clear()
        try:
            yield
        finally:
            self._rows = batch_rows + self._rows
            self._stacked.clear()

    def select(self, keep: Sequence[int]) -> None:
        """Keep only the batch positions ``keep`` (in that order), as the KV cache does."""
        self._rows = [self._rows[slot] for slot in keep]
        self._stacked.clear()

    def _deltas(self, layer: int, like: Tensor) -> Tensor:
        key = (layer, like.device, like.dtype)
        if key not in self._stacked:
            zero = like.new_zeros(like.shape[-1])
            rows = [self._per_row[row].get(layer) for row in self._rows]
            stacked = [zero if add is None else add.placed(like) for add in rows]
            self._stacked[key] = torch.stack(stacked)[:, None, :]
        return self._stacked[key]

    def hook_set(self) -> HookSet:
        """One hook per decoder layer any row adds to (no cache key: the engine keeps each
        row's own KV namespace)."""
        return HookSet(tuple((layer, self._hook(layer)) for layer in sorted(self._layers)))

    def _hook(self, layer: int) -> HookFn:
        def hook(module: nn.Module, args: tuple[Any, ...], output: Any) -> Any:
            return _shifted(output, lambda hidden: hidden + self._deltas(layer, hidden))

        return hook
