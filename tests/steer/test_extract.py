"""Extraction: a direction planted at a known layer is recovered; nothing appears before it."""

from __future__ import annotations

import random
from typing import Any

import pytest
import torch
from torch import nn

from gapscope.models.direction import DirectionCard
from gapscope.s2b.config import resolve
from gapscope.s2b.episode import build_episode
from gapscope.s2b.verbalizer import CORRUPTIONS
from gapscope.steer.extract import (
    PairTokens,
    episode_weights,
    extract_direction,
    mean_difference,
    parse_layers,
)
from gapscope.steer.pairs import build_pairs, episode_pairs, prompt_hash
from gapscope.steer.protocol import EXTRACTION_FIRST_SEED
from tests.steer.conftest import HIDDEN, EngineFactory

MARKER, TWIN = 10, 11  # token ids of w3 and w4 in the tiny vocabulary
PLANT_LAYER = 2


def _plant(engine: Any, u: torch.Tensor) -> list[Any]:
    """Make MARKER indistinguishable from TWIN, then add ``u`` after layer 2 wherever the
    input token is MARKER: a known difference appearing exactly at one layer."""
    with torch.no_grad():
        embedding = engine.model.get_input_embeddings().weight
        embedding[MARKER] = embedding[TWIN]
    seen: dict[str, torch.Tensor] = {}

    def remember(module: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        seen["ids"] = kwargs["input_ids"]

    def add(module: nn.Module, args: tuple[Any, ...], output: Any) -> Any:
        hidden = output[0] if isinstance(output, tuple) else output
        shifted = hidden + (seen["ids"] == MARKER)[..., None].to(hidden.dtype) * u
        return (shifted, *output[1:]) if isinstance(output, tuple) else shifted

    return [
        engine.model.register_forward_pre_hook(remember, with_kwargs=True),
        engine.decoder_layers()[PLANT_LAYER].register_forward_hook(add),
    ]


def _pairs(n: int, rng: random.Random) -> list[PairTokens]:
    """Identical prompts; the positive trace has MARKER where the negative has TWIN."""
    words = list(range(14, 60))
    pairs = []
    for i in range(n):
        prompt = tuple(rng.choice(words) for _ in range(rng.randint(3, 12)))
        negative = tuple(rng.choice([*words[:6], TWIN]) for _ in range(rng.randint(2, 9)))
        positive = tuple(MARKER if t == TWIN else t for t in negative)
        if positive == negative:  # every pair must carry the plant somewhere
            positive, negative = (MARKER, *positive), (TWIN, *negative)
        pairs.append(PairTokens(i % 3, prompt, positive, negative))
    return pairs


@pytest.mark.parametrize("chained", [False, True])
def test_planted_direction_is_recovered_and_absent_before_its_layer(
    make_engine: EngineFactory, chained: bool
) -> None:
    engine = make_engine()
    u = torch.randn(HIDDEN, generator=torch.Generator().manual_seed(3))
    handles = _plant(engine, u)
    try:
        pairs = _pairs(12, random.Random(0))
        found = mean_difference(engine, _chain(pairs) if chained else pairs, range(4))
    finally:
        for handle in handles:
            handle.remove()
    cosine = torch.nn.functional.cosine_similarity(found[PLANT_LAYER], u, dim=0)
    assert float(cosine) >= 0.99
    for layer in range(PLANT_LAYER):
        assert float(found[layer].norm()) < 1e-4 * float(u.norm())
    # after the plant the difference propagates (non-zero), so a later layer sees it too
    assert float(found[PLANT_LAYER + 1].norm()) > 0.01


def _chain(pairs: list[PairTokens]) -> list[PairTokens]:
    """Each pair's prompt extends the previous pair's prompt and positive trace, as an
    episode's query games do: the shape whose shared prefixes ``span_means`` reuses."""
    chained, before = [], ()
    for pair in pairs:
        prompt = before + pair.prompt
        chained.append(PairTokens(pair.group, prompt, pair.positive, pair.negative))
        before = prompt + pair.positive
    return chained


def test_reused_prefixes_give_the_means_of_sequences_computed_alone(
    make_engine: EngineFactory,
) -> None:
    engine = make_engine()
    pairs = _chain(_pairs(6, random.Random(1)))
    sequences = [p.prompt + t for p in pairs for t in (p.positive, p.negative)]
    spans = [
        (len(p.prompt), len(p.prompt) + len(t)) for p in pairs for t in (p.positive, p.negative)
    ]
    shared = engine.span_means(sequences, spans, (1, 3))
    alone = torch.cat(
        [engine.span_means([q], [span], (1, 3)) for q, span in zip(sequences, spans, strict=True)]
    )
    torch.testing.assert_close(shared, alone, rtol=1e-4, atol=1e-5)
    # and the prefixes were reused: a later sequence fed fewer tokens than it has
    fed: list[int] = []
    handle = engine.model.register_forward_pre_hook(
        lambda module, args, kwargs: fed.append(kwargs["input_ids"].shape[1]), with_kwargs=True
    )
    try:
        engine.span_means(sequences, spans, (1,))
    finally:
        handle.remove()
    assert fed[0] == len(sequences[0])
    assert all(n < len(q) for n, q in zip(fed[1:], sequences[1:], strict=True))


def test_span_means_rejects_a_span_outside_the_sequence(make_engine: EngineFactory) -> None:
    with pytest.raises(ValueError, match=r"span \[2, 9\)"):
        make_engine().span_means([[14, 15, 16]], [(2, 9)], [0])


def test_layer_specs() -> None:
    assert parse_layers("last-quarter", 30) == (23, 24, 25, 26, 27, 28, 29)  # seed: 7 of 30
    assert parse_layers("last-quarter", 2) == (1,)
    assert parse_layers("all", 3) == (0, 1, 2)
    assert parse_layers("3, 1,1", 4) == (1, 3)
    with pytest.raises(ValueError, match=r"not in 0\.\.3"):
        parse_layers("4", 4)
    with pytest.raises(ValueError, match="last-quarter, all or a comma list"):
        parse_layers("late", 4)


def test_episodes_weigh_the_same_whatever_their_pair_count() -> None:
    weights = episode_weights([0, 0, 0, 1])
    assert weights.tolist() == [1 / 6, 1 / 6, 1 / 6, 1 / 2]
    assert float(weights.sum()) == pytest.approx(1.0)


def test_pairs_share_the_prompt_and_differ_in_the_decision() -> None:
    config = resolve("demo")
    pairs = list(episode_pairs(config, 0))
    episode = build_episode(config, 0)
    assert [p.game_index for p in pairs] == [g.index for g in episode.query_games]
    for pair, game in zip(pairs, episode.query_games, strict=True):
        assert pair.messages[-1]["role"] == "user"
        assert f"Game {game.index + 1}." in pair.messages[-1]["content"]
        right = "Answer: same" if game.same else "Answer: different"
        assert pair.positive.endswith(right)
        assert not pair.negative.endswith(right)
    # earlier query games appear in later prompts with the correct trace as the reply
    assert pairs[-1].messages[-2]["content"].startswith("Step 1")
    assert prompt_hash(pairs) == prompt_hash(build_pairs(config, [0]))
    assert prompt_hash(pairs) != prompt_hash(build_pairs(config, [1]))


def test_cyclic_corruption_contrasts_bindings_and_the_default_also_the_decision() -> None:
    config = resolve("cat-10shot")
    episode = build_episode(config, 1000)
    by_kind = {kind: list(episode_pairs(config, 1000, kind)) for kind in CORRUPTIONS}
    for game, flip, cyclic in zip(
        episode.query_games, by_kind["wrong-decision"], by_kind["cyclic"], strict=True
    ):
        right = "Answer: same" if game.same else "Answer: different"
        assert flip.positive == cyclic.positive and flip.messages == cyclic.messages
        assert not flip.negative.endswith(right)  # every default negative decides wrong
        # the literal cyclic shift: no binding is right any more, so every game conflicts and
        # the twin says "different": wrong on "same" games, right on "different" ones
        assert cyclic.negative.endswith("Answer: different")
        assert cyclic.negative != cyclic.positive
    with pytest.raises(ValueError, match="corruption must be one of wrong-decision, cyclic"):
        build_pairs(config, [0], "shuffle")  # type: ignore[arg-type]


def test_the_card_records_the_corruption(make_engine: EngineFactory) -> None:
    engine = make_engine()
    vectors = {
        kind: extract_direction(
            engine,
            model_id="tiny",
            config=resolve("demo", query_size=2, k_shot=1),
            preset="demo",
            seeds=[EXTRACTION_FIRST_SEED],
            layers="3",
            corruption=kind,
        )
        for kind in CORRUPTIONS
    }
    for kind, vector in vectors.items():
        assert vector.card.corruption == kind
        assert DirectionCard.from_json(vector.card.to_json()).corruption == kind
        assert vector.card.seeds == (EXTRACTION_FIRST_SEED,)
    assert vectors["cyclic"].card.prompt_sha != vectors["wrong-decision"].card.prompt_sha
