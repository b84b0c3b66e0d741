"""The int8 weight format: close to fp32 per layer, batch-invariant, chosen by measuring
(``dtype=fastest``) and remembered."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch import nn

from gapscope.models.checkpoints import load_checkpoint
from gapscope.models.weight_format import (
    Int8Linear,
    apply_cpu_format,
    choose_format,
    decode_bytes,
    quantize_int8,
)


def _linear(seed: int = 0, bias: bool = True) -> nn.Linear:
    torch.manual_seed(seed)
    return nn.Linear(64, 48, bias=bias)


def test_int8_linear_is_within_one_percent_of_fp32() -> None:
    linear = _linear()
    x = torch.randn(5, 7, 64)
    with torch.inference_mode():
        exact, approx = linear(x), Int8Linear(linear)(x)
    assert approx.shape == exact.shape and approx.dtype == torch.float32
    assert float((approx - exact).norm() / exact.norm()) < 0.01


def test_a_row_gives_the_same_bits_alone_and_in_a_batch() -> None:
    layer = Int8Linear(_linear())
    rows = torch.randn(9, 64) * torch.linspace(0.1, 30, 9)[:, None]  # very different scales
    batched = layer(rows)
    for i in range(rows.shape[0]):
        assert torch.equal(layer(rows[i : i + 1])[0], batched[i])


def test_quantize_replaces_every_linear_and_reads_a_quarter_of_the_bytes(
    tiny_checkpoint: Path,
) -> None:
    model = load_checkpoint(tiny_checkpoint, device="cpu", dtype="float32").model
    linears = sum(type(m) is nn.Linear for m in model.modules())
    fp32 = decode_bytes(model)
    assert len(quantize_int8(model)) == linears
    assert not any(type(m) is nn.Linear for m in model.modules())
    # int8 linears (1 byte a weight, + one fp32 scale a row); norms and embeddings stay fp32
    assert decode_bytes(model) < 0.5 * fp32


def test_choose_format_keeps_the_faster_and_fp32_layers_come_back(tiny_checkpoint: Path) -> None:
    model = load_checkpoint(tiny_checkpoint, device="cpu", dtype="float32").model
    ids = torch.tensor([[1, 5, 6, 7]])
    reference = model(input_ids=ids).logits

    def int8_slower(m: nn.Module) -> float:
        return 2.0 if any(isinstance(x, Int8Linear) for x in m.modules()) else 1.0

    assert choose_format(model, int8_slower) == "fp32"
    assert torch.equal(model(input_ids=ids).logits, reference)
    assert choose_format(model, lambda m: 3.0 - int8_slower(m)) == "int8"
    assert any(isinstance(m, Int8Linear) for m in model.modules())


def test_fastest_measures_once_then_remembers(
    tiny_checkpoint: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []

    def chosen(model: nn.Module) -> str:
        calls.append(1)
        quantize_int8(model)
        return "int8"

    monkeypatch.setattr("gapscope.models.weight_format.choose_format", chosen)
    for _ in range(2):
        model = load_checkpoint(tiny_checkpoint, device="cpu", dtype="float32").model
        assert apply_cpu_format(model, str(tiny_checkpoint), "fastest", tmp_path) == "int8"
        assert any(isinstance(m, Int8Linear) for m in model.modules())
    assert len(calls) == 1  # the second load read the remembered choice


def test_auto_stays_fp32_and_measures_nothing(tiny_checkpoint: Path, tmp_path: Path) -> None:
    model = load_checkpoint(tiny_checkpoint, device="cpu", dtype="float32").model
    assert apply_cpu_format(model, str(tiny_checkpoint), "auto", tmp_path) == "float32"
    assert not any(isinstance(m, Int8Linear) for m in model.modules())
    assert not (tmp_path / "weight-formats.json").exists()


def test_int8_is_refused_off_the_cpu(tiny_checkpoint: Path, tmp_path: Path) -> None:
    model = load_checkpoint(tiny_checkpoint, device="cpu", dtype="float32").model
    model.to("meta")
    for dtype in ("int8", "fastest"):
        with pytest.raises(ValueError, match=f"dtype={dtype} is for the CPU only"):
            apply_cpu_format(model, str(tiny_checkpoint), dtype, tmp_path)


def test_auto_on_the_cpu_is_the_callers_cpu_format_and_hf_checkpoints_stay_fp32(
    tiny_checkpoint: Path,
) -> None:
    from gapscope.models.engine import Engine
    from gapscope.models.inspect_api import ModelArgs

    assert ModelArgs().dtype == "auto"  # what the provider loads: fp32 on the CPU
    as_embedded = Engine.from_pretrained(tiny_checkpoint, device="cpu", cpu_format="int8")
    assert as_embedded.weight_format == "int8"
    asked = Engine.from_pretrained(
        tiny_checkpoint, device="cpu", dtype="float32", cpu_format="int8"
    )
    assert asked.weight_format == "float32"  # a dtype given is the dtype used
    assert Engine.from_pretrained(tiny_checkpoint, device="cpu").weight_format == "float32"
