"""The speaker role (constructivity): reference speakers, the rule listener that learns a
speaker's convention from the sync rounds alone, and the speaker verbalizer of the exemplars.

In the speaker role the tested model writes each game's message for its target; the listener
is rule-based. It keeps the verbalizer's value map over the speaker's messages instead of the
posdis speaker's: the sync round after every game shows it the target and the message, it
binds each (position, token) to its most frequent value, and it decides every game by the
tracker's rule (no position conflicts). It assumes nothing about the code except
what the rules tell both players: one token per attribute position. So it is exact for a
posdis-compositional speaker once every value has been synced, and it can decode a held-out
combination only if the speaker *extends its own convention* to it.

Reference speakers set the scale of every measure (no model is called):

* ``rule`` - the posdis speaker of the listener role (the permuted offset-1 positional code),
  compositional: topsim and posdis 1 (up to edit-distance shifts), ZSCT 100;
* ``holistic`` - a fixed random injective code per episode: every combination has its own
  message, consistent across games, but the tokens at a position say nothing of the attribute
  there, so held-out combinations cannot be decoded;
* ``random`` - fresh random tokens in every game, neither consistent nor compositional.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from typing import Literal

from gapscope.s2b.episode import Combo, Episode, Game
from gapscope.s2b.messages import message_line
from gapscope.s2b.templates import template
from gapscope.s2b.verbalizer import Binding, ValueMap, value_labels

Speaker = Literal["lm", "rule", "random", "holistic"]
SPEAKERS: tuple[Speaker, ...] = ("lm", "rule", "random", "holistic")
Message = tuple[int, ...]


def holistic_code(episode: Episode) -> dict[Combo, Message]:
    """A random injective map from every combination of the episode to a message.

    Messages are drawn uniformly from {1..V}^N_dim, redrawn on a collision, so distinct
    meanings get distinct messages (a listener that memorised them could tell them apart).
    """
    rng = random.Random(f"holistic-speaker:{episode.seed}")
    n, vocab = episode.config.n_dim, episode.config.vocab_size
    code: dict[Combo, Message] = {}
    used: set[Message] = set()
    for combo in itertools.product(*(range(d) for d in episode.structure)):
        message = tuple(rng.randint(1, vocab) for _ in range(n))
        while message in used:
            message = tuple(rng.randint(1, vocab) for _ in range(n))
        used.add(message)
        code[combo] = message
    return code


def reference_speaker(name: str, episode: Episode) -> Callable[[Game], Message]:
    """The message function of a reference speaker for ``episode`` (seeded by its seed)."""
    if name == "rule":
        return lambda game: game.message
    if name == "holistic":
        code = holistic_code(episode)
        return lambda game: code[game.target]
    if name == "random":
        rng = random.Random(f"random-speaker:{episode.seed}")
        n, vocab = episode.config.n_dim, episode.config.vocab_size
        return lambda game: tuple(rng.randint(1, vocab) for _ in range(n))
    raise ValueError(f"{name!r} is not a reference speaker; choose rule, holistic or random")


class ConventionListener:
    """The speaker role's rule listener: the verbalizer's value map over the speaker's messages.

    It keeps V: (position, token) -> {value: count} from the sync rounds and binds each
    (position, token) to its most frequent value, exactly as the hypothesis tracker does. It
    decides by the tracker's rule read in the decoding direction: a position *conflicts* when
    the received token is bound to another value, or when it is unknown while the stimulus
    value already has a token (a fresh token names a fresh value); it is *open* when neither
    the token nor the value is known; the stimuli are the same when no position conflicts.
    For a one-token-per-value code this is the tracker's decision; reading the received token
    (rather than predicting one) also accepts a speaker who used two tokens for one value.

    A malformed message (``None``) cannot be decided and adds nothing to the value map: a
    message of the wrong length or with tokens outside the vocabulary says nothing positional.
    """

    def __init__(self, episode: Episode) -> None:
        self.episode = episode
        self.value_map = ValueMap()

    def decide(self, game: Game, message: Message | None) -> bool | None:
        """True = same, False = different, None when there is no message to decode."""
        if message is None:
            return None
        binding = self.value_map.binding()
        stimulus = value_labels(self.episode, game.listener)
        for pos, (label, received) in enumerate(zip(stimulus, message, strict=True)):
            by_token = binding.get(pos, {})
            meaning = by_token.get(received)
            if meaning is not None and meaning != label:
                return False
            if meaning is None and label in by_token.values():
                return False
        return True

    def sync(self, game: Game, message: Message | None) -> None:
        """The sync round after ``game``: the target and the message the listener received."""
        if message is not None:
            self.value_map.observe(message, value_labels(self.episode, game.target))

    def binding(self) -> Binding:
        """What the listener has learned of the speaker's code so far."""
        return self.value_map.binding()


def encode(binding: Binding, labels: tuple[str, ...], vocab_size: int) -> tuple[Message, str]:
    """The speaker verbalizer's message for a target, and its per-position reasons.

    Each value keeps the token the listener already binds to it at that position (the
    smallest, if the speaker used several); a value without one takes the smallest token that
    means nothing yet at that position, so the code stays one token per value and position.
    If every token is taken (a speaker that spread many tokens over few values), the smallest
    token is reused.
    """
    message: list[int] = []
    steps = []
    for pos, label in enumerate(labels):
        by_token = binding.get(pos, {})
        known = next((t for t, v in sorted(by_token.items()) if v == label), None)
        if known is not None:
            message.append(known)
            steps.append(f"position {pos + 1}: {label} -> {known} (already in my code)")
            continue
        free = next((t for t in range(1, vocab_size + 1) if t not in by_token), 1)
        message.append(free)
        steps.append(
            f"position {pos + 1}: {label} -> {free} (new: token {free} means nothing else there)"
        )
    return tuple(message), "; ".join(steps)


def exemplar(episode: Episode, binding: Binding, game: Game) -> tuple[Message, str]:
    """A k-shot speaker turn: the two-step trace and the message it ends with.

    Step 1 states the code the listener has learned from the speaker's messages so far (the
    model's own convention, not the posdis code); step 2 encodes the target with it, extending
    it to values it has no token for yet. The trace thereby shows how to keep and extend a
    positional convention without handing the model one.
    """
    labels = value_labels(episode, game.target)
    message, steps = encode(binding, labels, episode.config.vocab_size)
    if binding:
        known = "; ".join(
            f"position {pos + 1}: "
            + ", ".join(f"{tok} = {label}" for tok, label in sorted(binding[pos].items()))
            for pos in sorted(binding)
        )
        code = template("speaker_trace_code").format(bindings=known)
    else:
        code = template("speaker_trace_code_none")
    encoding = template("speaker_trace_encode").format(
        target="[" + ", ".join(labels) + "]", steps=steps
    )
    trace = template("speaker_trace").format(
        code=code, encoding=encoding, message=message_line(message)
    )
    return message, trace
