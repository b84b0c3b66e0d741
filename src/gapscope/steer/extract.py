"""Contrastive activation addition: the CLB direction from matched trace pairs.

Protocol (seed, "CLB-encoding direction via CAA"; the choices it leaves open are in
docs/steering.md):
* each pair is teacher-forced twice on the identical prompt, once with the correct trace and
  once with the corrupted one; a sequence is the prompt exactly as generation sees it (chat
  template, assistant turn opened) followed by the trace's tokens, and the *span* is those
  trace tokens only (no prompt, no end-of-turn token);
* per layer, the activation of a sequence is the mean over its span of the decoder layer's
  output (the residual stream after that block, where steering adds alpha * v);
* the direction is the weighted mean of (correct - corrupted) over all pairs, each episode
  weighing the same in total (a pair's weight is 1 / (episodes x pairs of its episode)), so
  an episode with more query games does not dominate; with equal query phases this is the
  plain mean;
* the negative traces are corrupted the way ``corruption`` names (default: every negative
  reaches the wrong decision; ``cyclic``: the seed's literal cyclic shift), recorded in the
  card;
* seeds: the caller's; the sweep's default starts at
  :data:`gapscope.steer.protocol.EXTRACTION_FIRST_SEED`, away from the evaluated episodes;
* layers: the last quarter of the decoder by default (floor(n / 4), at least one: the 7 last
  of a 30-layer model, as the seed reports for DeepSeek-Prover-V2-7B).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from gapscope.models import DirectionCard, Engine, ModelIdentity, SteeringVector
from gapscope.s2b import DEFAULT_CORRUPTION, Corruption, S2BConfig, check_corruption
from gapscope.steer.pairs import ContrastPair, build_pairs, prompt_hash

WEIGHTING = "episode-balanced: each pair weighs 1 / (episodes x pairs in its episode)"


def parse_layers(spec: str, n_layers: int) -> tuple[int, ...]:
    """``last-quarter`` | ``all`` | ``20,21,...`` -> sorted decoder-layer indices."""
    if spec == "last-quarter":
        count = max(1, n_layers // 4)
        return tuple(range(n_layers - count, n_layers))
    if spec == "all":
        return tuple(range(n_layers))
    try:
        layers = tuple(sorted({int(part) for part in spec.split(",") if part.strip()}))
    except ValueError:
        raise ValueError(
            f"layers must be last-quarter, all or a comma list such as 20,21; got {spec!r}"
        ) from None
    bad = [layer for layer in layers if not 0 <= layer < n_layers]
    if not layers or bad:
        raise ValueError(f"layers {bad or spec!r} are not in 0..{n_layers - 1} (the model's)")
    return layers


@dataclass(frozen=True)
class PairTokens:
    """A pair as token ids: ``prompt + positive`` and ``prompt + negative``."""

    group: int
    prompt: tuple[int, ...]
    positive: tuple[int, ...]
    negative: tuple[int, ...]


def tokenize_pairs(engine: Engine, pairs: Sequence[ContrastPair]) -> list[PairTokens]:
    """Render each pair's prompt with the chat template and tokenize its two traces."""
    out = []
    for pair in pairs:
        prompt = tuple(engine.render(pair.messages))
        traces = [
            tuple(int(t) for t in engine.tokenizer(text, add_special_tokens=False)["input_ids"])
            for text in (pair.positive, pair.negative)
        ]
        if not all(traces):
            raise ValueError(f"pair seed {pair.seed} game {pair.game_index}: empty trace")
        out.append(PairTokens(pair.seed, prompt, traces[0], traces[1]))
    return out


def episode_weights(groups: Sequence[int]) -> Tensor:
    """Each group (episode) weighs the same in total; the weights sum to 1."""
    sizes = Counter(groups)
    return torch.tensor([1.0 / (len(sizes) * sizes[g]) for g in groups], dtype=torch.float64)


def mean_difference(
    engine: Engine,
    pairs: Sequence[PairTokens],
    layers: Sequence[int],
) -> dict[int, Tensor]:
    """Per layer, the weighted mean over pairs of span-mean(positive) - span-mean(negative)."""
    if not pairs:
        raise ValueError("no contrast pairs to extract a direction from")
    sequences: list[tuple[int, ...]] = []
    spans: list[tuple[int, int]] = []
    for pair in pairs:
        for trace in (pair.positive, pair.negative):
            sequences.append(pair.prompt + trace)
            spans.append((len(pair.prompt), len(pair.prompt) + len(trace)))
    means = engine.span_means(sequences, spans, layers).double()
    differences = means[0::2] - means[1::2]  # [pairs, layers, hidden]
    weights = episode_weights([pair.group for pair in pairs])
    direction = torch.einsum("p,plh->lh", weights, differences).float()
    return {layer: direction[i].clone() for i, layer in enumerate(layers)}


def extract_direction(
    engine: Engine,
    *,
    model_id: str,
    config: S2BConfig,
    preset: str,
    seeds: Sequence[int],
    layers: str = "last-quarter",
    corruption: Corruption = DEFAULT_CORRUPTION,
) -> SteeringVector:
    """The CLB direction of ``engine``'s model from the query games of ``seeds``."""
    n_layers = len(engine.decoder_layers())
    chosen = parse_layers(layers, n_layers)
    pairs = build_pairs(config, seeds, check_corruption(corruption))
    directions = mean_difference(engine, tokenize_pairs(engine, pairs), chosen)
    card = DirectionCard(
        model=ModelIdentity.of(engine.model, n_layers, model_id),
        layers=chosen,
        norms={layer: float(v.norm()) for layer, v in directions.items()},
        kind="clb",
        pairs=len(pairs),
        preset=preset,
        seeds=tuple(seeds),
        prompt_sha=prompt_hash(pairs),
        weighting=WEIGHTING,
        corruption=corruption,
        extra={"config": dataclasses.asdict(config)},
    )
    return SteeringVector(directions, card)
