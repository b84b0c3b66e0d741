"""Finding and loading checkpoints, offline by default.

Any Hugging Face checkpoint feeds the engine: a local directory or a hub name; hub names
resolve from the local HF cache only, unless the user explicitly allows a download. The
embedded models (`gapscope.models.embedded`) are local directories made by converting a
packaged GGUF.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

CACHE_DIR_ENV = "GAPSCOPE_CACHE_DIR"

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
        if not (path / "config.json").is_file():
            # transformers would guess at a tokenizer and blame a missing sentencepiece/tiktoken
            raise CheckpointError(
                f"{text!r} is not a Hugging Face checkpoint: it has no config.json (a checkpoint "
                "directory holds config.json, the tokenizer files and the weights)"
            )
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
        if path.is_dir():
            hint = "the directory does not hold a complete checkpoint"
        elif allow_download:
            hint = "download failed"
        else:
            hint = (
                "it is not in the local Hugging Face cache; pass model arg allow_download=true "
                "(-M allow_download=true) to download it"
            )
        raise CheckpointError(f"cannot load checkpoint {text!r}: {hint} ({error})") from error
    target = resolve_device(device)
    model.to(device=target, dtype=resolve_dtype(dtype, target, getattr(model, "dtype", None)))
    model.eval()
    return LoadedCheckpoint(model=model, tokenizer=tokenizer, source=location)
