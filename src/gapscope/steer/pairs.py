"""Contrast pairs from S2B-LM episodes: one prompt, a correct and a corrupted trace.

For every query game of every episode the prompt is the rule listener's conversation up to
that game's user turn: the system prompt, then for each earlier game its user turn and the
correct verbalizer's trace as the assistant turn (the exemplars are such traces anyway). The
positive completion is the correct tracker's trace for the game, the negative one the
corrupted twin's (wrong bindings; with the default corruption also the wrong decision, see
:data:`gapscope.s2b.verbalizer.CORRUPTIONS`). Prompt and game are identical within a
pair, so the prompt cancels in the difference of the two trace activations.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from gapscope.s2b import (
    DEFAULT_CORRUPTION,
    Corruption,
    S2BConfig,
    Tracker,
    build_episode,
    system_prompt,
    user_turn,
)

Message = dict[str, str]


@dataclass(frozen=True)
class ContrastPair:
    """One matched pair: the same ``messages``, then ``positive`` or ``negative``."""

    seed: int
    game_index: int
    messages: tuple[Message, ...]
    positive: str
    negative: str


def episode_pairs(
    config: S2BConfig, seed: int, corruption: Corruption = DEFAULT_CORRUPTION
) -> Iterator[ContrastPair]:
    """The pairs of one episode, one per query game, in game order."""
    episode = build_episode(config, seed)
    messages: list[Message] = [{"role": "system", "content": system_prompt()}]
    tracker = Tracker(episode)
    twin = Tracker(episode, corrupted=True, corruption=corruption)
    for game in episode.games:
        messages.append({"role": "user", "content": user_turn(episode, game)})
        correct = tracker.decide(game)
        if game.phase == "query":
            wrong = twin.decide(game)
            yield ContrastPair(seed, game.index, tuple(messages), correct.trace, wrong.trace)
        messages.append({"role": "assistant", "content": correct.trace})
        tracker.sync(game)
        twin.sync(game)


def build_pairs(
    config: S2BConfig, seeds: Iterable[int], corruption: Corruption = DEFAULT_CORRUPTION
) -> list[ContrastPair]:
    """Every pair of every episode in ``seeds``."""
    return [pair for seed in seeds for pair in episode_pairs(config, seed, corruption)]


def prompt_hash(pairs: Iterable[ContrastPair]) -> str:
    """A hash of every prompt and trace: two extractions read the same text iff equal."""
    digest = hashlib.sha256()
    for pair in pairs:
        record = [pair.seed, pair.game_index, list(pair.messages), pair.positive, pair.negative]
        digest.update(json.dumps(record, sort_keys=True).encode())
    return digest.hexdigest()[:16]
