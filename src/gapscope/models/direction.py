"""The steering-vector type and its file format: one direction per decoder layer plus a card.

A direction is only meaningful for the model it was read from, so it never travels without its
card (model id and revision, hidden size, layer count, a fingerprint of the weights, the
layers, pairs, per-layer norms, preset, seeds, a hash of the prompts, gapscope version), and
:meth:`SteeringVector.check_model` refuses a model the card does not describe.

On disk a direction is a directory with ``direction.safetensors`` (one float32 tensor per layer,
named ``layer.<index>``) and ``card.json``; the safetensors metadata repeats the fingerprint so
a tensor file separated from its card can still be matched.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file
from torch import Tensor, nn

import gapscope

TENSORS_FILE = "direction.safetensors"
CARD_FILE = "card.json"
FORMAT_VERSION = 1


class DirectionError(ValueError):
    """A direction file is missing, malformed or belongs to another model."""


@dataclass(frozen=True)
class ModelIdentity:
    """What a direction must match: the residual width, the depth and the weights."""

    model_id: str
    revision: str | None
    hidden_size: int
    n_layers: int
    weights_sha: str

    @classmethod
    def of(cls, model: nn.Module, n_layers: int, model_id: str) -> ModelIdentity:
        """Identify ``model``; ``weights_sha`` hashes the input embedding matrix, which two
        checkpoints share only if they are the same model (renaming a path does not matter)."""
        config = getattr(model, "config", None)
        embedding = model.get_input_embeddings()  # type: ignore[operator]
        weights = embedding.weight.detach().to("cpu", torch.float32).contiguous()
        return cls(
            model_id=model_id,
            revision=getattr(config, "_commit_hash", None),
            hidden_size=int(weights.shape[1]),
            n_layers=n_layers,
            weights_sha=hashlib.sha256(weights.numpy().tobytes()).hexdigest()[:16],
        )


@dataclass(frozen=True)
class DirectionCard:
    """Provenance of a direction; ``kind`` is ``clb`` or a control (``orthogonal``,
    ``random``, with ``control_seed`` and ``control_stream``, the random stream it was drawn
    from: :mod:`gapscope.steer.controls`). ``corruption`` names how the negative traces were
    corrupted (:data:`gapscope.s2b.verbalizer.CORRUPTIONS`); ``seeds`` are the episodes the
    pairs came from."""

    model: ModelIdentity
    layers: tuple[int, ...]
    norms: dict[int, float]
    kind: str = "clb"
    pairs: int = 0
    preset: str | None = None
    seeds: tuple[int, ...] = ()
    prompt_sha: str | None = None
    weighting: str | None = None
    corruption: str | None = None
    control_seed: int | None = None
    control_stream: int | None = None
    gapscope_version: str = gapscope.__version__
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["norms"] = {str(layer): norm for layer, norm in self.norms.items()}
        data["format"] = FORMAT_VERSION
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DirectionCard:
        try:
            return cls(
                model=ModelIdentity(**data["model"]),
                layers=tuple(int(x) for x in data["layers"]),
                norms={int(k): float(v) for k, v in data["norms"].items()},
                kind=str(data["kind"]),
                pairs=int(data["pairs"]),
                preset=data.get("preset"),
                seeds=tuple(int(x) for x in data.get("seeds", ())),
                prompt_sha=data.get("prompt_sha"),
                weighting=data.get("weighting"),
                corruption=data.get("corruption"),
                control_seed=data.get("control_seed"),
                control_stream=data.get("control_stream"),
                gapscope_version=str(data["gapscope_version"]),
                extra=dict(data.get("extra", {})),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise DirectionError(f"malformed direction card: {error!r}") from None


@dataclass(frozen=True)
class SteeringVector:
    """``directions[layer]`` is the float32 CPU vector added (times alpha) after that layer."""

    directions: dict[int, Tensor]
    card: DirectionCard

    def __post_init__(self) -> None:
        if not self.directions:
            raise DirectionError("a steering vector needs at least one layer")
        width = self.card.model.hidden_size
        for layer, vector in self.directions.items():
            if vector.shape != (width,):
                raise DirectionError(
                    f"layer {layer}: direction has shape {tuple(vector.shape)}, the card says "
                    f"hidden size {width}"
                )

    @property
    def layers(self) -> tuple[int, ...]:
        return tuple(sorted(self.directions))

    @property
    def fingerprint(self) -> str:
        """A short hash of the tensors: equal fingerprints steer identically (KV-cache key)."""
        digest = hashlib.sha256()
        for layer in self.layers:
            digest.update(f"{layer}:".encode())
            digest.update(self.directions[layer].numpy().tobytes())
        return digest.hexdigest()[:16]

    def norms(self) -> dict[int, float]:
        return {layer: float(self.directions[layer].norm()) for layer in self.layers}

    def check_model(self, identity: ModelIdentity) -> None:
        """Refuse a model the card does not describe, saying what differs."""
        expected = self.card.model
        problems = []
        if expected.hidden_size != identity.hidden_size:
            problems.append(f"hidden size {expected.hidden_size} vs {identity.hidden_size}")
        if expected.n_layers != identity.n_layers:
            problems.append(f"{expected.n_layers} decoder layers vs {identity.n_layers}")
        if not problems and expected.weights_sha != identity.weights_sha:
            problems.append(f"weights {expected.weights_sha} vs {identity.weights_sha}")
        if problems:
            raise DirectionError(
                f"this direction was extracted from {expected.model_id!r}, not from "
                f"{identity.model_id!r} ({'; '.join(problems)}): extract one for this model "
                "with `gapscope steer extract`"
            )

    def save(self, directory: Path) -> Path:
        """Write ``direction.safetensors`` and ``card.json`` into ``directory``."""
        directory.mkdir(parents=True, exist_ok=True)
        tensors = {f"layer.{layer}": self.directions[layer].contiguous() for layer in self.layers}
        save_file(
            tensors,
            str(directory / TENSORS_FILE),
            metadata={"weights_sha": self.card.model.weights_sha, "kind": self.card.kind},
        )
        card = json.dumps(self.card.to_json(), indent=2, sort_keys=True)
        (directory / CARD_FILE).write_text(card + "\n", encoding="utf-8")
        return directory

    @classmethod
    def load(cls, directory: Path) -> SteeringVector:
        """Read a direction directory; every defect is a :class:`DirectionError`."""
        card_path, tensor_path = directory / CARD_FILE, directory / TENSORS_FILE
        if not card_path.is_file() or not tensor_path.is_file():
            raise DirectionError(
                f"{directory} is not a direction directory: it needs {CARD_FILE} and "
                f"{TENSORS_FILE} (write one with `gapscope steer extract`)"
            )
        try:
            card = DirectionCard.from_json(json.loads(card_path.read_text(encoding="utf-8")))
            tensors = load_file(str(tensor_path))
        except (json.JSONDecodeError, UnicodeDecodeError, SafetensorError, OSError) as error:
            raise DirectionError(f"cannot read direction {directory}: {error}") from None
        directions = {}
        for name, tensor in tensors.items():
            prefix, _, index = name.partition(".")
            if prefix != "layer" or not index.isdigit():
                raise DirectionError(f"{tensor_path}: unexpected tensor {name!r}")
            directions[int(index)] = tensor.to(torch.float32)
        if tuple(sorted(directions)) != tuple(sorted(card.layers)):
            raise DirectionError(
                f"{directory}: tensors for layers {sorted(directions)} but the card lists "
                f"{sorted(card.layers)}"
            )
        return cls(directions, card)
