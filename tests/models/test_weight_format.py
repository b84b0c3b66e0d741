"""The CPU weight formats: int8 (close to fp32 per layer, batch-invariant, chosen by measuring
with ``dtype=fastest`` and remembered) and the GGUF's own codes (``gguf``: what ``auto`` loads
where the checkpoint carries them and the kernel builds, else fp32)."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file
from torch import nn

from gapscope.models.block_linear import BlockEmbedding, BlockLinear
from gapscope.models.checkpoints import load_checkpoint
from gapscope.models.engine import Engine, GenerationRequest, SamplingParams
from gapscope.models.gguf_codes import CODES_FILE
from gapscope.models.native_kernel import KernelUnavailable
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
    """A checkpoint without GGUF codes (an HF checkpoint like the tiny one) loads in fp32."""
    assert not (tiny_checkpoint / CODES_FILE).exists()
    model = load_checkpoint(tiny_checkpoint, device="cpu", dtype="float32").model
    assert apply_cpu_format(model, str(tiny_checkpoint), "auto", tmp_path) == "float32"
    assert not any(isinstance(m, Int8Linear | BlockLinear) for m in model.modules())
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
    from gapscope.models.inspect_api import ModelArgs

    assert ModelArgs().dtype == "auto"  # what the provider loads: fp32 on the CPU
    as_embedded = Engine.from_pretrained(tiny_checkpoint, device="cpu", cpu_format="int8")
    assert as_embedded.weight_format == "int8"
    asked = Engine.from_pretrained(
        tiny_checkpoint, device="cpu", dtype="float32", cpu_format="int8"
    )
    assert asked.weight_format == "float32"  # a dtype given is the dtype used
    assert Engine.from_pretrained(tiny_checkpoint, device="cpu").weight_format == "float32"


# ------------------------------------------------------- gguf: the GGUF's own codes, on the CPU


@pytest.fixture(scope="module")
def coded_checkpoint(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, dict[str, torch.Tensor]]:
    """A tiny Llama wide enough for the kernel (every layer's inputs a multiple of 64) whose
    fp32 weights are random codes rebuilt, and those codes in ``gguf-codes.safetensors``'s
    layout. The directory holds no codes file: a test copies it and adds one."""
    from tests.models.test_block_linear import codes_for
    from tests.models.tiny import build_tiny_checkpoint

    built = build_tiny_checkpoint(tmp_path_factory.mktemp("tiny-64"), hidden_size=64)
    loaded = load_checkpoint(built, device="cpu", dtype="float32")
    codes = codes_for(loaded.model, seed=5)
    directory = tmp_path_factory.mktemp("tiny-64-coded")
    loaded.model.save_pretrained(directory)
    loaded.tokenizer.save_pretrained(directory)
    flat: dict[str, torch.Tensor] = {}
    for name, found in codes.items():
        flat[f"{name}:codes"], flat[f"{name}:scale"] = found.codes, found.scale
        if found.offset is not None:
            flat[f"{name}:offset"] = found.offset
    return directory, flat


def _with_codes(coded: tuple[Path, dict[str, torch.Tensor]], tmp_path: Path) -> Path:
    """A copy of the coded checkpoint with its codes file (the shared one stays as it is)."""
    source, flat = coded
    copy = Path(shutil.copytree(source, tmp_path / "checkpoint"))
    save_file(flat, str(copy / CODES_FILE))
    return copy


def _coded_modules(model: nn.Module) -> int:
    return sum(isinstance(m, BlockLinear | BlockEmbedding) for m in model.modules())


def _greedy_tokens(engine: Engine) -> list[int]:
    request = GenerationRequest(
        ({"role": "user", "content": "w1 w2 w3 w4"},),
        SamplingParams(max_tokens=12, ignore_eos=True),
    )
    return list(engine.generate([request])[0].tokens)


def test_auto_without_a_codes_file_is_fp32_and_silent(
    coded_checkpoint: tuple[Path, dict[str, torch.Tensor]],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    directory, _ = coded_checkpoint
    assert not (directory / CODES_FILE).exists()
    model = load_checkpoint(directory, device="cpu", dtype="float32").model
    linears = [name for name, m in model.named_modules() if type(m) is nn.Linear]
    with caplog.at_level(logging.WARNING, logger="gapscope.models.weight_format"):
        assert apply_cpu_format(model, str(directory), "auto", tmp_path) == "float32"
    assert [name for name, m in model.named_modules() if type(m) is nn.Linear] == linears
    assert _coded_modules(model) == 0
    assert not caplog.records  # nothing to warn about: no codes to miss


def test_auto_with_codes_loads_them_and_decodes_as_fp32(
    coded_checkpoint: tuple[Path, dict[str, torch.Tensor]], tmp_path: Path
) -> None:
    checkpoint = _with_codes(coded_checkpoint, tmp_path)
    model = load_checkpoint(checkpoint, device="cpu", dtype="float32").model
    linears = sum(type(m) is nn.Linear for m in model.modules())
    assert apply_cpu_format(model, str(checkpoint), "auto", tmp_path / "root") == "gguf"
    assert _coded_modules(model) == linears + 1  # every linear layer and the embedding
    assert not any(type(m) is nn.Linear for m in model.modules())

    coded = Engine.from_pretrained(checkpoint, device="cpu")
    fp32 = Engine.from_pretrained(checkpoint, device="cpu", dtype="float32")
    assert coded.weight_format == "gguf"
    assert fp32.weight_format == "float32"
    assert _greedy_tokens(coded) == _greedy_tokens(fp32)


def test_dtype_float32_keeps_fp32_with_codes(
    coded_checkpoint: tuple[Path, dict[str, torch.Tensor]], tmp_path: Path
) -> None:
    checkpoint = _with_codes(coded_checkpoint, tmp_path)
    model = load_checkpoint(checkpoint, device="cpu", dtype="float32").model
    assert apply_cpu_format(model, str(checkpoint), "float32", tmp_path) == "float32"
    assert _coded_modules(model) == 0


def test_gguf_without_codes_is_an_error(tiny_checkpoint: Path, tmp_path: Path) -> None:
    model = load_checkpoint(tiny_checkpoint, device="cpu", dtype="float32").model
    with pytest.raises(ValueError, match=r"^model arg dtype=gguf: .*carries no GGUF codes"):
        apply_cpu_format(model, str(tiny_checkpoint), "gguf", tmp_path)
    assert _coded_modules(model) == 0


def test_without_the_kernel_auto_falls_back_to_fp32_saying_why_and_gguf_fails(
    coded_checkpoint: tuple[Path, dict[str, torch.Tensor]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def no_kernel() -> None:
        raise KernelUnavailable("no compiler")

    monkeypatch.setattr("gapscope.models.native_kernel.kernel", no_kernel)
    checkpoint = _with_codes(coded_checkpoint, tmp_path)
    model = load_checkpoint(checkpoint, device="cpu", dtype="float32").model
    with caplog.at_level(logging.WARNING, logger="gapscope.models.weight_format"):
        assert apply_cpu_format(model, str(checkpoint), "auto", tmp_path) == "float32"
    assert _coded_modules(model) == 0
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "no compiler" in warnings[0].getMessage()
    with pytest.raises(ValueError, match=r"^model arg dtype=gguf: no compiler"):
        apply_cpu_format(model, str(checkpoint), "gguf", tmp_path)
    assert _coded_modules(model) == 0
