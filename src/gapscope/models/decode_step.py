"""A Llama or Gemma 3 decoder layer's decode step in the ``gguf`` format in a few kernel calls:
the same functions on the same floats as ``lean_layers``' ops, so the same bits.

Why: with the products and the attention in the kernel, what was left of a batch-1 decode
step of SmolLM2 was the Python and the tensor ops between them: 6.6 of its 18 ms (30 layers,
about 220 us each; one core of an AMD EPYC), each op a few microseconds of dispatch,
allocation and checks for a few hundred floats. Here a layer's step is its norms' means of
squares and its activation (torch's own: their summation order and their exp are torch's to
choose, so they are not reproduced) and, between them, one kernel call for each run of the
kernel's own steps (``block_kernel.cpp``: ``gs_norm_product``, ``gs_attention_step``,
``gs_product_add``, ``gs_norm_add``), which chain the functions the ops called one by one:
the norm's tail, the stacked products, the rotary embedding, the cache write, the attention,
the residual sums (an fp32 addition rounds alike anywhere).

It is taken only where every one of those ops would have gone to the kernel anyway: fp32 on
the CPU, one position a row, the projections stacked as ``block_linear.fuse`` stacks them
and the others bias-free ``BlockLinear``s, the kernel attention (``KERNEL_ROW_ATTENTION``,
the ``gguf`` format's) on rows whose columns are contiguous, the engine's growing cache;
anywhere else ``lean_layers`` goes on as before. ``tests/models/test_decode_step.py`` checks
the logits against transformers' forward bit for bit.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from gapscope.models.block_linear import FusedProducts, KernelWeights, kernel_weights
from gapscope.models.decode_attention import takes_heads
from gapscope.models.kvcache import GrowingCache, GrowingLayer
from gapscope.models.layer_ops import library_for
from gapscope.models.row_attention import KERNEL_ROW_ATTENTION, beyond_sdpa, decode_starts


@dataclass(frozen=True)
class LayerShape:
    """What a layer's decode step needs from its configuration and structure, read once
    (``shape_of``; transformers' config attributes cost a few microseconds each)."""

    heads: int
    kv_heads: int
    dim: int
    norms: tuple[Any, ...]
    """every norm of the layer: their weights must be fp32 vectors for the kernel"""
    gemma3: bool


def shape_of(layer: Any, gemma3: bool) -> LayerShape | None:
    """``layer``'s shape, or None where the kernel cannot take its attention (more than
    ``decode_attention.MAX_GROUP`` query heads a kv head, or a head width not a multiple of 16)."""
    attention = layer.self_attn
    heads, kv_heads = attention.config.num_attention_heads, attention.config.num_key_value_heads
    dim = attention.head_dim
    if not takes_heads(heads, kv_heads, dim):
        return None
    names = ["input_layernorm", "post_attention_layernorm"]
    if gemma3:
        names += ["pre_feedforward_layernorm", "post_feedforward_layernorm"]
        names += ["self_attn.q_norm", "self_attn.k_norm"]
    norms = tuple(layer.get_submodule(name) for name in names)
    return LayerShape(heads, kv_heads, dim, norms, gemma3)


def decode_layer(
    layer: Any,
    shape: LayerShape | None,
    qkv: FusedProducts | None,
    gate_up: FusedProducts | None,
    hidden: Tensor,
    mask: Tensor | None,
    cache: Any,
    rotary: tuple[Tensor, Tensor],
    kwargs: dict[str, Any],
) -> Tensor | None:
    """The decode step of a Llama or Gemma 3 layer (``lean_layers._llama_layer``'s or
    ``_gemma3_layer``'s ops, as ``shape`` says), or None where the kernel does not take it."""
    step = _Step.plan(layer, shape, qkv, gate_up, hidden, mask, cache, rotary, kwargs)
    if step is None:
        return None
    return _gemma3_layer(step, hidden) if step.shape.gemma3 else _llama_layer(step, hidden)


def _llama_layer(step: _Step, hidden: Tensor) -> Tensor:
    layer = step.layer
    norm = layer.input_layernorm
    projected = step.norm_product(hidden, norm.weight, norm.variance_epsilon, step.qkv)
    hidden = step.product_add(step.attend(projected), step.o_proj, hidden)
    norm = layer.post_attention_layernorm
    gate, up = step.split(
        step.norm_product(hidden, norm.weight, norm.variance_epsilon, step.gate_up)
    )
    return step.product_add(layer.mlp.act_fn.forward(gate) * up, step.down, hidden)


def _gemma3_layer(step: _Step, hidden: Tensor) -> Tensor:
    layer = step.layer
    norm = layer.input_layernorm
    projected = step.norm_product(hidden, norm.weight, norm.eps, step.qkv)
    attended = step.product_add(step.attend(projected), step.o_proj, None)
    norm = layer.post_attention_layernorm
    hidden = step.norm_add(attended, norm.weight, norm.eps, hidden)
    norm = layer.pre_feedforward_layernorm
    gate, up = step.split(step.norm_product(hidden, norm.weight, norm.eps, step.gate_up))
    down = step.product_add(layer.mlp.act_fn.forward(gate) * up, step.down, None)
    norm = layer.post_feedforward_layernorm
    return step.norm_add(down, norm.weight, norm.eps, hidden)


def _variance(hidden: Tensor) -> Tensor:
    """A norm's mean of squares, as ``layer_ops.rms_norm`` takes it (torch's reduction)."""
    return hidden.pow(2).mean(-1, keepdim=True).contiguous()


@dataclass(frozen=True)
class _PassInputs:
    """What a forward pass gives its layers alike (rotary tables, mask, cache) and what the
    kernel makes of it, checked once a pass: the model hands every layer the same objects
    (Gemma 3 two sets, its sliding and full layers'), so a layer whose inputs are among the
    last two checked reuses that check instead of repeating it (some 40 us a layer, a
    millisecond a SmolLM2 step). Held weakly: an entry keeps no pass's tensors alive, and a
    dead reference matches nothing, so new objects at old addresses are never mistaken."""

    cos: weakref.ref[Tensor]
    sin: weakref.ref[Tensor]
    mask: weakref.ref[Tensor] | None
    cache: weakref.ref[GrowingCache]
    rows: int
    starts: Tensor
    """each row's first attended column"""
    library: Any

    def matches(self, cos: Tensor, sin: Tensor, mask: Tensor | None, cache: Any, rows: int) -> bool:
        return (
            self.cos() is cos
            and self.sin() is sin
            and (mask is None if self.mask is None else self.mask() is mask)
            and self.cache() is cache
            and self.rows == rows
        )


_LAST_INPUTS: tuple[_PassInputs, ...] = ()
"""The last two passes' inputs checked (replaced whole, so threads never see it half made)."""


def _pass_inputs(
    rows: int,
    mask: Tensor | None,
    cache: Any,
    rotary: tuple[Tensor, Tensor],
    dim: int,
    config: Any,
) -> _PassInputs | None:
    """The checked inputs of a decode step's pass, or None where the kernel does not take
    them: gradients wanted, the model's attention not the kernel's (``config``: it is set
    for a whole model, between passes), rotary tables not ``[rows, 1, dim]`` fp32, a mask
    whose rows' columns are not contiguous, another cache than the engine's."""
    global _LAST_INPUTS
    cos, sin = rotary
    for inputs in _LAST_INPUTS:
        if inputs.matches(cos, sin, mask, cache, rows):
            return inputs
    if (
        torch.is_grad_enabled()  # the kernel's outputs have no backward
        or config._attn_implementation != KERNEL_ROW_ATTENTION
        or not isinstance(cache, GrowingCache)
    ):
        return None
    library = library_for((cos, sin))
    starts = decode_starts(rows, mask)
    if (
        library is None
        or starts is None
        or any(t.shape != (rows, 1, dim) or not t.is_contiguous() for t in (cos, sin))
    ):
        return None
    inputs = _PassInputs(
        weakref.ref(cos),
        weakref.ref(sin),
        None if mask is None else weakref.ref(mask),
        weakref.ref(cache),
        rows,
        torch.tensor(starts, dtype=torch.int64),
        library,
    )
    _LAST_INPUTS = (*_LAST_INPUTS[-1:], inputs)
    return inputs


@dataclass(slots=True)
class _Step:
    """One layer's decode step, planned once every condition for the kernel holds (``plan``),
    so that nothing (the cache's new column above all) changes before it is certain to run."""

    library: Any
    layer: Any
    shape: LayerShape
    rows: int
    qkv: KernelWeights
    gate_up: KernelWeights
    gate_up_sizes: list[int]
    o_proj: KernelWeights
    down: KernelWeights
    cache: GrowingLayer
    starts: Tensor
    cos: Tensor
    sin: Tensor

    @classmethod
    def plan(
        cls,
        layer: Any,
        shape: LayerShape | None,
        qkv: FusedProducts | None,
        gate_up: FusedProducts | None,
        hidden: Tensor,
        mask: Tensor | None,
        cache: Any,
        rotary: tuple[Tensor, Tensor],
        kwargs: dict[str, Any],
    ) -> _Step | None:
        if (
            shape is None
            or qkv is None
            or gate_up is None
            or hidden.dim() != 3
            or hidden.shape[1] != 1
            or not hidden.is_contiguous()
            or hidden.dtype is not torch.float32
            or not hidden.is_cpu
            or beyond_sdpa(kwargs)
        ):
            return None
        # sub-modules read off ``_modules``: ``nn.Module.__getattr__`` costs about a
        # microsecond each, and this runs for every layer of every decode step
        attention, mlp = layer._modules["self_attn"], layer._modules["mlp"]
        rows = hidden.shape[0]
        inputs = _pass_inputs(rows, mask, cache, rotary, shape.dim, attention.config)
        if inputs is None or attention.training or not _norms_fit(shape):
            return None
        stacked = (qkv.kernel_weights(), gate_up.kernel_weights())
        single = (
            kernel_weights(attention._modules["o_proj"]),
            kernel_weights(mlp._modules["down_proj"]),
        )
        growing = cache.growing_layer(attention.layer_idx)
        if (
            stacked[0] is None
            or stacked[1] is None
            or single[0] is None
            or single[1] is None
            or growing is None
            or growing.keys is None
            or growing.keys.dtype != torch.float32
            or growing.keys.stride(-1) != 1
            or growing.keys.shape[0] != rows
        ):
            return None
        return cls(
            library=inputs.library,
            layer=layer,
            shape=shape,
            rows=rows,
            qkv=stacked[0],
            gate_up=stacked[1],
            gate_up_sizes=list(gate_up.sizes),
            o_proj=single[0],
            down=single[1],
            cache=growing,
            starts=inputs.starts,
            cos=rotary[0],
            sin=rotary[1],
        )

    def norm_product(
        self, hidden: Tensor, weight: Tensor, eps: float, products: KernelWeights
    ) -> Tensor:
        """``products``' outputs for the norm of ``hidden``, ``[rows, 1, outputs]``."""
        variance = _variance(hidden)
        outputs = products.codes.shape[0]
        out = torch.empty((self.rows, 1, outputs), dtype=torch.float32)
        self.library.gs_norm_product(
            hidden.data_ptr(),
            self.rows,
            hidden.shape[-1],
            variance.data_ptr(),
            eps,
            weight.data_ptr(),
            self.shape.gemma3,
            *_weight_args(products),
            out.data_ptr(),
            outputs,
        )
        return out

    def split(self, gate_up: Tensor) -> list[Tensor]:
        """The gate and up projections' outputs: views, as ``FusedProducts.outputs`` gives
        them (an activation's bits can depend on its input's strides)."""
        return list(gate_up.split_with_sizes(self.gate_up_sizes, dim=-1))

    def product_add(self, x: Tensor, weights: KernelWeights, residual: Tensor | None) -> Tensor:
        """``residual + x . w^T`` (``residual`` None: the product), ``[rows, 1, outputs]``."""
        x = x.contiguous()
        outputs = weights.codes.shape[0]
        out = torch.empty((self.rows, 1, outputs), dtype=torch.float32)
        self.library.gs_product_add(
            x.data_ptr(),
            self.rows,
            x.shape[-1],
            *_weight_args(weights),
            None if residual is None else residual.data_ptr(),
            out.data_ptr(),
            outputs,
        )
        return out

    def norm_add(self, hidden: Tensor, weight: Tensor, eps: float, residual: Tensor) -> Tensor:
        """``residual + norm(hidden)``: Gemma 3's norms after attention and MLP."""
        variance = _variance(hidden)
        out = torch.empty(hidden.shape, dtype=torch.float32)
        self.library.gs_norm_add(
            hidden.data_ptr(),
            self.rows,
            hidden.shape[-1],
            variance.data_ptr(),
            eps,
            weight.data_ptr(),
            self.shape.gemma3,
            residual.data_ptr(),
            out.data_ptr(),
        )
        return out

    def attend(self, projected: Tensor) -> Tensor:
        """The attention's output before ``o_proj`` (``[rows, 1, heads * dim]``) from the
        stacked projections; the step's key and value go into the cache's next column."""
        attention = self.layer.self_attn
        heads, kv_heads, dim = self.shape.heads, self.shape.kv_heads, self.shape.dim
        # Gemma 3's query and key norms: variances of the same views as its norms take them
        variances: list[Tensor | None] = [None, None]
        norms: list[Any] = [None, None]
        if self.shape.gemma3:
            query, key, _ = projected.split_with_sizes(
                [heads * dim, kv_heads * dim, kv_heads * dim], dim=-1
            )
            variances = [
                _variance(query.view(self.rows, 1, heads, dim).transpose(1, 2)),
                _variance(key.view(self.rows, 1, kv_heads, dim).transpose(1, 2)),
            ]
            norms = [attention.q_norm, attention.k_norm]
        key_buffer, value_buffer, column = self.cache.next_column()
        out = torch.empty((self.rows, 1, heads * dim), dtype=torch.float32)
        self.library.gs_attention_step(
            projected.data_ptr(),
            self.rows,
            heads,
            kv_heads,
            dim,
            *(None if v is None else v.data_ptr() for v in variances),
            *(0.0 if n is None else n.eps for n in norms),
            *(None if n is None else n.weight.data_ptr() for n in norms),
            self.cos.data_ptr(),
            self.sin.data_ptr(),
            key_buffer.data_ptr(),
            value_buffer.data_ptr(),
            key_buffer.stride(0),
            key_buffer.stride(1),
            key_buffer.stride(2),
            column,
            self.starts.data_ptr(),
            attention.scaling,
            out.data_ptr(),
        )
        return out


def _weight_args(weights: KernelWeights) -> tuple[Any, ...]:
    """``weights`` as ``gs_block_matmul`` takes them: codes, nibbles, scale, offset, block."""
    offset = weights.offset
    return (
        weights.codes.data_ptr(),
        weights.nibbles,
        weights.scale.data_ptr(),
        None if offset is None else offset.data_ptr(),
        weights.block,
    )


def _norms_fit(shape: LayerShape) -> bool:
    """Every norm weight of the layer an fp32 vector on the CPU, as the kernel reads it (read
    off ``_parameters``: ``nn.Module.__getattr__`` costs a microsecond a weight)."""
    for norm in shape.norms:
        weight = norm._parameters["weight"]
        if (
            weight is None
            or weight.dtype is not torch.float32
            or not weight.is_cpu
            or weight.dim() != 1
            or not weight.is_contiguous()
        ):
            return False
    return True
