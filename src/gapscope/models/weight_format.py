"""The CPU weight formats of the engine: ``gguf`` (the default where a checkpoint carries its
GGUF's codes, ``gapscope.models.block_linear``), fp32 (the default elsewhere), or int8 weights
as an explicit opt-in.

Decoding one token at batch 1 reads every weight once, so on a CPU its speed is bounded by
memory bandwidth over the weight bytes: fp32 weights read 4 bytes a parameter, int8 weights 1.
``Int8Linear`` keeps each linear layer's weight as int8 with one scale per output channel
(symmetric, absmax) and quantizes its input to int8 with one scale per token row, then
multiplies in integers (``torch._int_mm``, exact int32 accumulation) and rescales to the
input's dtype. Two properties the diagnostics rely on follow:

* a row's output does not depend on the other rows of its batch (each row has its own
  activation scale and integer sums are exact), so a steered row decodes the same batched
  and alone;
* only the linear layers change: the residual stream between decoder layers, where steering
  hooks add their vectors, stays fp32, as do norms, attention scores and the embedding table.

int8 is not fp32, and it is never a default. On the calibration set of
``gapscope.models.calibration`` (the diagnostics' own prompts, 64 greedy tokens each), the
share of SmolLM2-135M-Instruct's continuations that equal fp32's for at least 32 tokens was
6 of 21 with int8 weights and int8 activations, 16 of 28 with int8 weights alone (fp32
activations, dequantized per matmul) and 24 of 28 with bf16 weights alone: none reaches the
95 % a faithful default needs (``calibration.FAITHFUL_SHARE``). The ``gguf`` format, which
computes with fp32's own weight values, gave 28 of 28. (llama.cpp on the shipped 4-bit GGUF
is no argument for int8 activations: its output followed fp32's for 64 and 28 tokens on two
task prompts where int8's first token already differed.) ``dtype=int8`` and
``dtype=fastest`` (int8 where it decodes faster, measured once per checkpoint, torch version
and CPU, and remembered) stay available;
the format used is recorded in every reply's metadata (``gapscope.models.inspect_api``).
"""

from __future__ import annotations

import inspect
import json
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

import torch
from torch import Tensor, nn

from gapscope.models import native_kernel
from gapscope.models.gguf_codes import CODES_FILE, apply_codes, load_codes

WeightFormat = Literal["fp32", "int8"]
WEIGHT_FORMATS: tuple[WeightFormat, ...] = ("fp32", "int8")
logger = logging.getLogger(__name__)
CHOICES_FILE = "weight-formats.json"
"""In gapscope's cache root: the format measured fastest, per checkpoint directory."""


class Int8Linear(nn.Module):
    """A linear layer with int8 weights (per output channel) and int8 activations (per row)."""

    weight_t: Tensor
    weight_scale: Tensor

    def __init__(self, linear: nn.Linear) -> None:
        super().__init__()
        weight = linear.weight.detach().float()
        scale = weight.abs().amax(dim=1).clamp(min=1e-12) / 127.0
        quantized = torch.round(weight / scale[:, None]).clamp(-127, 127).to(torch.int8)
        # [in, out] laid out column-major: the layout torch._int_mm reads fastest on the CPU
        self.register_buffer("weight_t", quantized.contiguous().t())
        self.register_buffer("weight_scale", scale)
        self.bias = None if linear.bias is None else nn.Parameter(linear.bias.detach().clone())
        self.in_features, self.out_features = linear.in_features, linear.out_features

    def forward(self, x: Tensor) -> Tensor:
        shape = x.shape
        rows = x.reshape(-1, self.in_features).float()
        scale = rows.abs().amax(dim=1, keepdim=True).clamp(min=1e-12) / 127.0
        quantized = torch.round(rows / scale).to(torch.int8)
        out = torch._int_mm(quantized, self.weight_t).float() * (scale * self.weight_scale)
        if self.bias is not None:
            out = out + self.bias
        return out.to(x.dtype).reshape(*shape[:-1], self.out_features)


Replaced = list[tuple[nn.Module, str, nn.Linear]]
"""Where each replaced linear layer was (parent, attribute) and the layer itself."""


def quantize_int8(model: nn.Module) -> Replaced:
    """Replace every ``nn.Linear`` of ``model`` (the output head included) by an
    ``Int8Linear``, in place; returns the replaced layers, for ``restore``."""
    replaced: Replaced = []
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if type(child) is nn.Linear:
                setattr(parent, name, Int8Linear(child))
                replaced.append((parent, name, child))
    return replaced


def restore(replaced: Sequence[tuple[nn.Module, str, nn.Module]]) -> None:
    """Put layers back where they were: undoes ``quantize_int8``."""
    for parent, name, linear in replaced:
        setattr(parent, name, linear)


def decode_bytes(model: nn.Module) -> int:
    """Bytes of weights one batch-1 decode step reads: every parameter and buffer once,
    except input embedding tables (one row per token) that no output head reads too."""
    embedding_weights = {
        id(module.weight) for module in model.modules() if isinstance(module, nn.Embedding)
    }
    output = getattr(model, "get_output_embeddings", lambda: None)()
    read_by_head = getattr(output, "weight", None)
    seen: set[int] = set()
    total = 0
    for tensor in (*model.parameters(), *model.buffers()):
        if id(tensor) in seen or tensor.dtype not in _WEIGHT_DTYPES:
            continue
        seen.add(id(tensor))
        if id(tensor) in embedding_weights and tensor is not read_by_head:
            continue
        total += tensor.numel() * tensor.element_size()
    return total


_WEIGHT_DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.int8, torch.uint8)


def decode_step_seconds(model: Any, steps: int = 3, context: int = 32) -> float:
    """Best seconds of one batch-1 decode step after a ``context``-token prompt."""
    vocab = int(model.config.vocab_size)
    ids = torch.arange(context).remainder(vocab)[None, :]
    parameters = inspect.signature(model.forward).parameters
    cache_arg = "cache" if "cache" in parameters else "past_key_values"
    best = float("inf")
    with torch.inference_mode():
        out = model(input_ids=ids, use_cache=True)
        cache, token = out.past_key_values, out.logits[:, -1:].argmax(-1)
        for _ in range(steps):
            start = time.perf_counter()
            out = model(input_ids=token, use_cache=True, **{cache_arg: cache})
            best = min(best, time.perf_counter() - start)
            cache, token = out.past_key_values, out.logits[:, -1:].argmax(-1)
    return best


def choose_format(
    model: nn.Module, timer: Callable[[Any], float] = decode_step_seconds, rounds: int = 3
) -> WeightFormat:
    """Leave ``model`` in int8 if that decodes faster than fp32 on this machine, else fp32;
    returns the format chosen. The two alternate for ``rounds`` rounds and each keeps its
    best time, so other load on the machine slows both alike."""
    replaced = quantize_int8(model)
    quantized = [(parent, name, getattr(parent, name)) for parent, name, _ in replaced]
    best = {"fp32": float("inf"), "int8": float("inf")}
    for _ in range(rounds):
        restore(replaced)
        best["fp32"] = min(best["fp32"], timer(model))
        restore(quantized)
        best["int8"] = min(best["int8"], timer(model))
    if best["int8"] < best["fp32"]:
        return "int8"
    restore(replaced)
    return "fp32"


def remembered_format(cache_root: Path, checkpoint: str) -> str | None:
    """The format chosen for ``checkpoint`` on an earlier load, if any."""
    path = cache_root / CHOICES_FILE
    try:
        choices = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    value = choices.get(checkpoint) if isinstance(choices, dict) else None
    return value if value in WEIGHT_FORMATS else None


def remember_format(cache_root: Path, checkpoint: str, weight_format: str) -> None:
    """Record the format chosen for ``checkpoint`` (a rewrite of one small JSON file)."""
    path = cache_root / CHOICES_FILE
    try:
        choices = json.loads(path.read_text())
    except (OSError, ValueError):
        choices = {}
    if not isinstance(choices, dict):
        choices = {}
    choices[checkpoint] = weight_format
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.with_suffix(".tmp")
    staging.write_text(json.dumps(choices, indent=1, sort_keys=True))
    staging.replace(path)


def apply_cpu_format(model: nn.Module, checkpoint: str, requested: str, root: Path) -> str:
    """Put a freshly loaded fp32 ``model`` in the weight format ``requested`` asks for and
    return it. ``auto`` (and ``gguf``): the GGUF's own codes, evaluated exactly, where the
    checkpoint carries them (the embedded models; ``gapscope.models.block_linear``), else fp32
    as loaded; ``gguf`` asked for by name where it cannot be had is an error. ``int8``;
    ``fastest`` (CPU only), the format remembered for ``checkpoint`` on this machine under
    ``root``, else the faster of fp32 and int8 measured now (and remembered). Any other dtype
    (``float32`` included) leaves the model as loaded."""
    device = next(model.parameters()).device
    if requested in ("auto", "gguf"):
        if device.type == "cpu":
            unavailable = exact_codes_unavailable(model, checkpoint)
        else:
            unavailable = f"the gguf format is for the CPU only, not {device}"
        if unavailable is None:
            return "gguf"
        if requested == "gguf":
            raise ValueError(f"model arg dtype=gguf: {unavailable}")
        if _carries_codes(checkpoint):
            logger.warning(
                "%s: loaded in fp32, the gguf format is unavailable: %s", checkpoint, unavailable
            )
        return str(next(model.parameters()).dtype).removeprefix("torch.")
    if requested not in ("int8", "fastest"):
        return str(next(model.parameters()).dtype).removeprefix("torch.")
    if device.type != "cpu":
        raise ValueError(f"model arg dtype={requested} is for the CPU only, not {device}")
    if requested == "int8":
        quantize_int8(model)
        return "int8"
    key = f"{checkpoint} | torch {torch.__version__} | {torch.backends.cpu.get_cpu_capability()}"
    chosen = remembered_format(root, key)
    if chosen == "int8":
        quantize_int8(model)
    elif chosen is None:
        chosen = choose_format(model)
        remember_format(root, key, chosen)
    return chosen


def exact_codes_unavailable(model: nn.Module, checkpoint: str) -> str | None:
    """Put the GGUF codes ``checkpoint`` carries into ``model`` (fp32, on the CPU); None when
    done, else why not (the model then stays as loaded)."""
    directory = Path(checkpoint)
    if not _carries_codes(checkpoint):
        return f"{checkpoint} carries no GGUF codes ({CODES_FILE}: only the embedded models do)"
    if next(model.parameters()).dtype != torch.float32:
        return "the gguf format computes in fp32"
    try:
        native_kernel.kernel()
    except native_kernel.KernelUnavailable as error:
        return str(error)
    if apply_codes(model, load_codes(directory)) == 0:
        return f"no layer of the model matches {directory / CODES_FILE}"
    return None


def _carries_codes(checkpoint: str) -> bool:
    return (Path(checkpoint) / CODES_FILE).is_file()
