"""A decoder layer's steps in the kernel are bitwise transformers' (``layer_ops``).

Rotary embeddings: the query and key come as the engine's layers make them, views of one
stacked projection (rows wider than the query, so neither is contiguous) or a norm's output
(Gemma 3's ``q_norm``); the shapes are SmolLM2's (9 query heads over 3, dim 64) and Gemma 3's
(4 over 1, dim 256), for 1 to 3 rows. RMS norms: Llama's and Gemma 3's modules themselves,
with random weights and a non-default epsilon, on a decode step's and a prefill's hidden
states and on Gemma's per-head query views. Whatever the kernel does not take (several
positions a row, other dtypes, no kernel) gets the stock ops' own result.
"""

from __future__ import annotations

import pytest
import torch
from torch import Tensor
from transformers.models.gemma3 import modeling_gemma3
from transformers.models.llama import modeling_llama

from gapscope.models import layer_ops, native_kernel
from gapscope.models.layer_ops import rms_norm, rotate

SHAPES = {"smollm2": (9, 3, 64), "gemma3": (4, 1, 256)}


def _projected(rows: int, heads: int, kv_heads: int, dim: int, positions: int = 1) -> list[Tensor]:
    """Query and key ``[rows, heads, positions, dim]``, views of one stacked projection."""
    generator = torch.Generator().manual_seed(rows * 1000 + dim)
    stacked = torch.randn(rows, positions, (heads + 2 * kv_heads) * dim, generator=generator)
    query, key, _ = stacked.split_with_sizes([heads * dim, kv_heads * dim, kv_heads * dim], -1)
    return [t.view(rows, positions, -1, dim).transpose(1, 2) for t in (query, key)]


def _tables(rows: int, dim: int, positions: int = 1) -> tuple[Tensor, Tensor]:
    generator = torch.Generator().manual_seed(dim + rows)
    angles = torch.rand(rows, positions, dim, generator=generator) * 100
    return angles.cos(), angles.sin()


@pytest.mark.parametrize("rows", [1, 2, 3])
@pytest.mark.parametrize("model", sorted(SHAPES))
def test_rotation_is_bitwise_transformers(model: str, rows: int) -> None:
    heads, kv_heads, dim = SHAPES[model]
    modeling = modeling_gemma3 if model == "gemma3" else modeling_llama
    query, key = _projected(rows, heads, kv_heads, dim)
    if model == "gemma3":  # the norm's output, as the layer rotates it
        query, key = query * 1.5, key * 0.5
    cos, sin = _tables(rows, dim)
    expected = modeling.apply_rotary_pos_emb(query, key, cos, sin)
    got = rotate(query, key, cos, sin, modeling.apply_rotary_pos_emb)
    for mine, theirs in zip(got, expected, strict=True):
        assert torch.equal(mine, theirs)
        assert mine.shape == theirs.shape and mine.stride() == theirs.stride()
    assert not any(torch.equal(g, x) for g, x in zip(got, (query, key), strict=True))


def _spy(calls: list[int]) -> layer_ops.Rotation:
    def stock(q: Tensor, k: Tensor, cos: Tensor, sin: Tensor) -> tuple[Tensor, Tensor]:
        calls.append(1)
        return modeling_llama.apply_rotary_pos_emb(q, k, cos, sin)

    return stock


def test_several_positions_a_row_go_to_the_stock_function() -> None:
    query, key = _projected(2, 9, 3, 64, positions=5)
    cos, sin = _tables(2, 64, positions=5)
    calls: list[int] = []
    got = rotate(query, key, cos, sin, _spy(calls))
    assert calls == [1]
    expected = modeling_llama.apply_rotary_pos_emb(query, key, cos, sin)
    assert all(torch.equal(g, e) for g, e in zip(got, expected, strict=True))


def test_without_the_kernel_the_stock_function_rotates(monkeypatch: pytest.MonkeyPatch) -> None:
    def unavailable() -> None:
        raise native_kernel.KernelUnavailable("no compiler here")

    monkeypatch.setattr(layer_ops, "kernel", unavailable)
    query, key = _projected(1, 9, 3, 64)
    cos, sin = _tables(1, 64)
    calls: list[int] = []
    rotate(query, key, cos, sin, _spy(calls))
    assert calls == [1]


def test_tables_shared_by_the_rows_go_to_the_stock_function() -> None:
    """cos and sin of one row broadcast over a batch: not the kernel's layout."""
    query, key = _projected(3, 9, 3, 64)
    cos, sin = _tables(1, 64)
    calls: list[int] = []
    got = rotate(query, key, cos, sin, _spy(calls))
    assert calls == [1]
    assert got[0].shape == (3, 9, 1, 64)


def _norm(model: str, dim: int) -> torch.nn.Module:
    generator = torch.Generator().manual_seed(dim)
    norm: torch.nn.Module
    if model == "gemma3":
        norm = modeling_gemma3.Gemma3RMSNorm(dim, eps=3e-6)
    else:
        norm = modeling_llama.LlamaRMSNorm(dim, eps=3e-6)
    with torch.no_grad():
        norm.weight.copy_(torch.randn(dim, generator=generator))
    return norm


def _fused(model: str, norm: torch.nn.Module, hidden: Tensor) -> Tensor | None:
    eps = norm.eps if model == "gemma3" else norm.variance_epsilon
    return rms_norm(hidden, norm.weight.detach(), float(eps), plus_one=model == "gemma3")


@pytest.mark.parametrize("where", ["decode", "prefill", "query heads"])
@pytest.mark.parametrize("model", sorted(SHAPES))
def test_norm_is_bitwise_transformers(model: str, where: str) -> None:
    heads, kv_heads, dim = SHAPES[model]
    generator = torch.Generator().manual_seed(7)
    if where == "query heads":
        hidden, _ = _projected(3, heads, kv_heads, dim)
    else:
        positions = 1 if where == "decode" else 9
        hidden = torch.randn(3, positions, 576, generator=generator) * 4
        dim = 576
    norm = _norm(model, dim)
    with torch.no_grad():
        expected = norm(hidden)
        got = _fused(model, norm, hidden)
    assert got is not None
    assert torch.equal(got, expected)
    assert got.shape == expected.shape


def test_norm_leaves_what_it_cannot_read_to_the_stock_ops() -> None:
    norm = _norm("smollm2", 64)
    weight = norm.weight.detach()
    hidden = torch.randn(2, 5, 3, 64).transpose(1, 2)  # several positions, not contiguous
    assert rms_norm(hidden, weight, 1e-5, plus_one=False) is None
    assert rms_norm(hidden.contiguous().bfloat16(), weight, 1e-5, plus_one=False) is None
    assert rms_norm(torch.randn(2, 1, 32), weight, 1e-5, plus_one=False) is None


def test_with_gradients_wanted_the_stock_ops_keep_autograd() -> None:
    """The kernel's outputs have no backward: where a gradient is wanted (a parameter that
    requires one, grad mode on) both steps leave the work to torch's ops; in inference mode,
    as the engine decodes, they take it."""
    norm = _norm("smollm2", 64)
    hidden = torch.randn(2, 1, 64)
    assert rms_norm(hidden, norm.weight, 1e-5, plus_one=False) is None
    loss = norm(hidden).sum()
    loss.backward()
    assert norm.weight.grad is not None
    query, key = _projected(1, 9, 3, 64)
    query.requires_grad_(True)
    cos, sin = _tables(1, 64)
    calls: list[int] = []
    rotated, _ = rotate(query, key, cos, sin, _spy(calls))
    assert calls == [1] and rotated.grad_fn is not None
    with torch.inference_mode():
        assert rms_norm(hidden, norm.weight, 1e-5, plus_one=False) is not None
