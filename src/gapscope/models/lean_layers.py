"""Llama and Gemma 3 decoder layers run without their sub-modules' call machinery: the same
ops, in the same order, on the same tensors, so the same bits; fewer Python calls.

Why: in a batch-1 decode step of SmolLM2 in the ``gguf`` format the matrix products took
about 9 ms and the Python around them about 5 ms, most of it ``nn.Module.__call__`` and
transformers' wrappers on the 14 sub-modules of each of the 30 layers (norms, attention,
projections, MLP, activation); Gemma 3's layers have 18 (norms before and after attention and
MLP, and norms of queries and keys). ``install`` gives each ``LlamaDecoderLayer`` and
``Gemma3DecoderLayer`` a forward that reads those sub-modules' parameters and calls their
``forward`` directly, as the layer's own ``forward`` (transformers 5) computes it. The layer
itself is still called as a module, so hooks on decoder layers (steering, activation capture)
fire as before; whenever a sub-module carries a hook, or a global module hook is set, the
layer runs transformers' own forward instead. The rotary embedding and the norms' elementwise
tails go to the kernel where it is built (``layer_ops``: the same bits, fewer tensor ops), and
in the ``gguf`` format a decode step's whole layer does (``decode_step``: a few kernel calls
between torch's reductions, the same bits again).
``tests/models/test_lean_layers.py`` checks the logits bitwise against transformers' forward
(prefill and decode, padded batches, fp32 and ``gguf`` weights, Gemma's sliding-window layers
past their window).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor, nn
from torch.nn.modules import module as torch_module
from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS
from transformers.models.gemma3 import modeling_gemma3
from transformers.models.llama import modeling_llama

from gapscope.models import decode_step
from gapscope.models.block_linear import FusedProducts, fuse
from gapscope.models.layer_ops import rms_norm, rotate


def _llama_norm(norm: Any, hidden: Tensor) -> Tensor:
    """``LlamaRMSNorm.forward``'s ops (its tail in the kernel where it can: ``layer_ops``)."""
    fused = rms_norm(hidden, norm.weight, norm.variance_epsilon, plus_one=False)
    if fused is not None:
        return fused
    input_dtype = hidden.dtype
    hidden = hidden.to(torch.float32)
    variance = hidden.pow(2).mean(-1, keepdim=True)
    hidden = hidden * torch.rsqrt(variance + norm.variance_epsilon)
    return norm.weight * hidden.to(input_dtype)  # type: ignore[no-any-return]


def _gemma3_norm(norm: Any, hidden: Tensor) -> Tensor:
    """``Gemma3RMSNorm.forward``'s ops (a weight of zeros scales by one; the tail in the
    kernel where it can: ``layer_ops``)."""
    fused = rms_norm(hidden, norm.weight, norm.eps, plus_one=True)
    if fused is not None:
        return fused
    output = hidden.float()
    output = output * torch.rsqrt(output.pow(2).mean(-1, keepdim=True) + norm.eps)
    output = output * (1.0 + norm.weight.float())
    return output.type_as(hidden)  # type: ignore[no-any-return]


def _hook_tables(layer: nn.Module) -> list[dict[int, Any]]:
    """The dicts of forward hooks and pre-hooks of ``layer``'s sub-modules: torch registers
    and removes a module's hooks in those very dicts, so holding them sees every change,
    and ``any`` over them is one C loop a layer call instead of a generator over modules."""
    return [
        table
        for module in layer.modules()
        if module is not layer
        for table in (module._forward_hooks, module._forward_pre_hooks)
    ]


def _hooked(hook_tables: list[dict[int, Any]]) -> bool:
    """Whether a hook could see a sub-module's call (then only the stock forward will do)."""
    if torch_module._global_forward_hooks or torch_module._global_forward_pre_hooks:
        return True
    return any(hook_tables)


def _attention(
    attention: Any,
    hidden: Tensor,
    attention_mask: Tensor | None,
    cache: Any,
    position_embeddings: tuple[Tensor, Tensor],
    gemma3: bool,
    qkv: FusedProducts | None,
    kwargs: dict[str, Any],
) -> Tensor:
    """``LlamaAttention.forward``'s ops, or ``Gemma3Attention.forward``'s: queries and keys
    normalized (``q_norm``, ``k_norm``) and the layer's sliding window (None for its full
    layers) passed to the attention."""
    modeling: Any = modeling_gemma3 if gemma3 else modeling_llama
    input_shape = hidden.shape[:-1]
    hidden_shape = (*input_shape, -1, attention.head_dim)
    projected = _project(hidden, qkv, (attention.q_proj, attention.k_proj, attention.v_proj))
    query, key, value = (p.view(hidden_shape).transpose(1, 2) for p in projected)
    extra: dict[str, Any] = {}
    if gemma3:
        query = _gemma3_norm(attention.q_norm, query)
        key = _gemma3_norm(attention.k_norm, key)
        extra["sliding_window"] = attention.sliding_window
    cos, sin = position_embeddings
    query, key = rotate(query, key, cos, sin, modeling.apply_rotary_pos_emb)
    if cache is not None:
        key, value = cache.update(key, value, attention.layer_idx, kwargs=kwargs)
    interface = ALL_ATTENTION_FUNCTIONS.get_interface(
        attention.config._attn_implementation, modeling.eager_attention_forward
    )
    output, _ = interface(
        attention,
        query,
        key,
        value,
        attention_mask,
        dropout=0.0 if not attention.training else attention.attention_dropout,
        scaling=attention.scaling,
        **extra,
        **kwargs,
    )
    output = output.reshape(*input_shape, -1).contiguous()
    return attention.o_proj.forward(output)  # type: ignore[no-any-return]


def _project(hidden: Tensor, fused: FusedProducts | None, layers: tuple[Any, ...]) -> list[Tensor]:
    """Each of ``layers``' outputs for ``hidden``: one stacked kernel call where ``fused``
    takes it (a decode step), else each layer's own forward."""
    outputs = fused.outputs(hidden) if fused is not None else None
    return outputs if outputs is not None else [layer.forward(hidden) for layer in layers]


def _mlp(mlp: Any, hidden: Tensor, gate_up: FusedProducts | None) -> Tensor:
    """``LlamaMLP.forward``'s ops, which ``Gemma3MLP`` shares."""
    gate, up = _project(hidden, gate_up, (mlp.gate_proj, mlp.up_proj))
    return mlp.down_proj.forward(mlp.act_fn.forward(gate) * up)  # type: ignore[no-any-return]


def _llama_layer(
    layer: Any, fused: _Fused, hidden_states: Tensor, kwargs: dict[str, Any]
) -> Tensor:
    """``LlamaDecoderLayer.forward``'s ops."""
    mask, cache, rotary = _layer_inputs(kwargs)
    for unused in ("position_ids", "use_cache"):
        kwargs.pop(unused, None)
    stepped = decode_step.decode_layer(
        layer, fused.shape, fused.qkv, fused.gate_up, hidden_states, mask, cache, rotary, kwargs
    )
    if stepped is not None:
        return stepped
    residual = hidden_states
    hidden = _llama_norm(layer.input_layernorm, hidden_states)
    hidden = residual + _attention(
        layer.self_attn, hidden, mask, cache, rotary, False, fused.qkv, kwargs
    )
    residual = hidden
    hidden = _llama_norm(layer.post_attention_layernorm, hidden)
    return residual + _mlp(layer.mlp, hidden, fused.gate_up)


def _gemma3_layer(
    layer: Any, fused: _Fused, hidden_states: Tensor, kwargs: dict[str, Any]
) -> Tensor:
    """``Gemma3DecoderLayer.forward``'s ops: a norm before and after attention and MLP each;
    its attention gets ``position_ids`` among its keyword arguments, as there."""
    mask, cache, rotary = _layer_inputs(kwargs)
    stepped = decode_step.decode_layer(
        layer, fused.shape, fused.qkv, fused.gate_up, hidden_states, mask, cache, rotary, kwargs
    )
    if stepped is not None:
        return stepped
    residual = hidden_states
    hidden = _gemma3_norm(layer.input_layernorm, hidden_states)
    hidden = _attention(layer.self_attn, hidden, mask, cache, rotary, True, fused.qkv, kwargs)
    hidden = _gemma3_norm(layer.post_attention_layernorm, hidden)
    hidden = residual + hidden
    residual = hidden
    hidden = _gemma3_norm(layer.pre_feedforward_layernorm, hidden)
    hidden = _mlp(layer.mlp, hidden, fused.gate_up)
    hidden = _gemma3_norm(layer.post_feedforward_layernorm, hidden)
    return residual + hidden  # type: ignore[no-any-return]


def _layer_inputs(kwargs: dict[str, Any]) -> tuple[Tensor | None, Any, tuple[Tensor, Tensor]]:
    """The mask, cache and rotary tables a decoder layer is called with, taken out of
    ``kwargs`` (the cache under either of transformers 5's names)."""
    mask = kwargs.pop("attention_mask", None)
    cache = kwargs.pop("cache", None)
    if cache is None:
        cache = kwargs.pop("past_key_values", None)
    return mask, cache, kwargs.pop("position_embeddings")


@dataclass(frozen=True)
class _Fused:
    """A layer's projections that read one input, stacked for one kernel call each in a
    decode step (``block_linear.FusedProducts``; None where the weights are not all codes),
    and its shape for ``decode_step`` (None where the kernel cannot take its attention)."""

    qkv: FusedProducts | None
    gate_up: FusedProducts | None
    shape: decode_step.LayerShape | None


LayerBody = Callable[[Any, _Fused, Tensor, dict[str, Any]], Tensor]


def lean_forward(
    layer: Any,
    hook_tables: list[dict[int, Any]],
    body: LayerBody,
    fused: _Fused,
    hidden_states: Tensor,
    **kwargs: Any,
) -> Tensor:
    """The layer's forward without sub-module calls (module docstring)."""
    if _hooked(hook_tables):
        return type(layer).forward(layer, hidden_states, **kwargs)  # type: ignore[no-any-return]
    return body(layer, fused, hidden_states, kwargs)


_LLAMA_PARTS = {
    "self_attn": modeling_llama.LlamaAttention,
    "mlp": modeling_llama.LlamaMLP,
    "input_layernorm": modeling_llama.LlamaRMSNorm,
    "post_attention_layernorm": modeling_llama.LlamaRMSNorm,
}
_GEMMA3_PARTS = {
    "self_attn": modeling_gemma3.Gemma3Attention,
    "self_attn.q_norm": modeling_gemma3.Gemma3RMSNorm,
    "self_attn.k_norm": modeling_gemma3.Gemma3RMSNorm,
    "mlp": modeling_gemma3.Gemma3MLP,
    "input_layernorm": modeling_gemma3.Gemma3RMSNorm,
    "post_attention_layernorm": modeling_gemma3.Gemma3RMSNorm,
    "pre_feedforward_layernorm": modeling_gemma3.Gemma3RMSNorm,
    "post_feedforward_layernorm": modeling_gemma3.Gemma3RMSNorm,
}
_LAYERS: dict[type, tuple[dict[str, type], LayerBody]] = {
    modeling_llama.LlamaDecoderLayer: (_LLAMA_PARTS, _llama_layer),
    modeling_gemma3.Gemma3DecoderLayer: (_GEMMA3_PARTS, _gemma3_layer),
}
"""The decoder layers reproduced, with the exact classes of their parts: a subclass or a
swapped part (another norm, say) may compute otherwise, so it keeps transformers' forward."""


def _body(layer: nn.Module) -> LayerBody | None:
    """The lean forward's body for ``layer``, or None where it would not be transformers'."""
    parts, body = _LAYERS.get(type(layer), ({}, None))
    if body is None:
        return None
    for name, kind in parts.items():
        try:
            part = layer.get_submodule(name)
        except AttributeError:
            return None
        if type(part) is not kind:
            return None
    return body


def install(layers: list[nn.Module]) -> int:
    """Give every Llama and Gemma 3 decoder layer of ``layers`` the lean forward; returns
    how many."""
    installed = 0
    for layer in layers:
        body = _body(layer)
        if body is not None:
            attention, mlp = layer.self_attn, layer.mlp
            fused = _Fused(
                fuse([attention.q_proj, attention.k_proj, attention.v_proj]),  # type: ignore[list-item, union-attr]
                fuse([mlp.gate_proj, mlp.up_proj]),  # type: ignore[list-item, union-attr]
                decode_step.shape_of(layer, gemma3=body is _gemma3_layer),
            )
            tables = _hook_tables(layer)
            layer.forward = functools.partial(lean_forward, layer, tables, body, fused)  # type: ignore[method-assign]
            installed += 1
    return installed


def uninstall(layers: list[nn.Module]) -> None:
    """Back to transformers' forward (the instance attribute ``install`` set goes)."""
    for layer in layers:
        layer.__dict__.pop("forward", None)
