"""The hypothesis-tracking rule-based listener and its corrupted twin.

The verbalizer only uses what a listener legitimately sees: the sync rounds, which reveal the
speaker's target after every game. It accumulates the value map
V: (position, token) -> {value: count} and turns it into a three-step trace:

1. sync summary - what the most recent sync round bound (position, token) to;
2. inverse prediction - the message the speaker would have sent for the listener's stimulus;
3. match comparison - how many positions of the actual message agree, hence same/different.

The corrupted twin reasons from a deranged binding: at each position, the tokens seen so far
are sorted and each is re-bound to the value of the next token in that order (a cyclic shift),
so no token keeps its true value wherever a position has two or more observed values. Its trace
is surface-coherent but its predictions are wrong; it says "different" on every game whose
stimuli match, and it is the negative side of the steering pairs.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from gapscope.s2b.episode import Episode, Game
from gapscope.s2b.templates import template

Binding = dict[int, dict[int, str]]  # position -> token -> value label


@dataclass
class ValueMap:
    """V: (position, token) -> {value label: count}, fed by sync rounds only."""

    counts: dict[tuple[int, int], Counter[str]] = field(
        default_factory=lambda: defaultdict(Counter)
    )

    def observe(self, message: tuple[int, ...], target_labels: tuple[str, ...]) -> None:
        """Record one sync round: the token at each position was the target's value there."""
        for pos, (tok, label) in enumerate(zip(message, target_labels, strict=True)):
            self.counts[(pos, tok)][label] += 1

    def binding(self) -> Binding:
        """Each seen (position, token) bound to its most frequent value (ties: alphabetical)."""
        out: Binding = defaultdict(dict)
        for (pos, tok), counter in sorted(self.counts.items()):
            out[pos][tok] = min(counter, key=lambda label: (-counter[label], label))
        return dict(out)


def derange(binding: Binding) -> Binding:
    """The corrupted twin's binding: a cyclic shift of values over each position's tokens."""
    shifted: Binding = {}
    for pos, by_token in binding.items():
        tokens = sorted(by_token)
        shifted[pos] = {
            tok: by_token[tokens[(i + 1) % len(tokens)]] for i, tok in enumerate(tokens)
        }
    return shifted


@dataclass(frozen=True)
class Decision:
    """A tracker's full reasoning for one game."""

    predicted: tuple[int | None, ...]
    agreements: int
    mismatched_positions: tuple[int, ...]
    same: bool
    trace: str


def decide(
    binding: Binding, game: Game, stimulus: tuple[str, ...], last_sync: Game | None
) -> Decision:
    """Reason about ``game`` from ``binding`` and write the three-step trace.

    A position counts as a mismatch when the predicted token differs from the received one, or
    when no token is known for the stimulus value but the received token is already bound to
    another value (the code is bijective per position). Without any known mismatch the tracker
    answers "same": the sync evidence contradicts nothing. ``stimulus`` is the listener's
    stimulus as value labels.
    """
    predicted: list[int | None] = []
    mismatched: list[int] = []
    for pos, (label, received) in enumerate(zip(stimulus, game.message, strict=True)):
        by_token = binding.get(pos, {})
        token = next((t for t, v in sorted(by_token.items()) if v == label), None)
        predicted.append(token)
        if (token is not None and token != received) or (
            token is None and received in by_token and by_token[received] != label
        ):
            mismatched.append(pos)
    agreements = sum(1 for p, r in zip(predicted, game.message, strict=True) if p == r)
    same = not mismatched
    trace = _render_trace(binding, game, last_sync, stimulus, predicted, agreements, same)
    return Decision(tuple(predicted), agreements, tuple(mismatched), same, trace)


def value_labels(episode: Episode, combo: tuple[int, ...]) -> tuple[str, ...]:
    """The names the verbalizer's hypotheses are about (item names; SCS section centres)."""
    return tuple(episode.domain.value_label(dim, v) for dim, v in enumerate(combo))


def _fmt_tokens(tokens: tuple[int | None, ...] | tuple[int, ...]) -> str:
    return "[" + ", ".join("?" if t is None else str(t) for t in tokens) + "]"


def _render_trace(
    binding: Binding,
    game: Game,
    last_sync: Game | None,
    stimulus: tuple[str, ...],
    predicted: list[int | None],
    agreements: int,
    same: bool,
) -> str:
    if last_sync is None:
        sync = template("trace_sync_none")
    else:
        bound = "; ".join(
            f"position {pos + 1}: {tok} = {binding.get(pos, {}).get(tok, '?')}"
            for pos, tok in enumerate(last_sync.message)
        )
        sync = template("trace_sync").format(message=_fmt_tokens(last_sync.message), bindings=bound)
    steps = "; ".join(
        f"position {pos + 1}: {label} -> {'?' if tok is None else tok}"
        for pos, (label, tok) in enumerate(zip(stimulus, predicted, strict=True))
    )
    inverse = template("trace_inverse").format(
        stimulus="[" + ", ".join(stimulus) + "]",
        predicted=_fmt_tokens(tuple(predicted)),
        steps=steps,
    )
    match = template("trace_match").format(
        message=_fmt_tokens(game.message),
        agreements=agreements,
        n=len(game.message),
        verdict="the same" if same else "different",
    )
    return template("trace").format(
        sync=sync, inverse=inverse, match=match, answer="same" if same else "different"
    )


class Tracker:
    """Plays along an episode: observes each sync round, decides each game.

    ``corrupted=True`` gives the twin that reasons from the deranged binding.
    """

    def __init__(self, episode: Episode, *, corrupted: bool = False) -> None:
        self.episode = episode
        self.corrupted = corrupted
        self.value_map = ValueMap()
        self._last_sync: Game | None = None

    def decide(self, game: Game) -> Decision:
        """The decision and trace for ``game`` from the sync evidence seen so far."""
        binding = self.value_map.binding()
        if self.corrupted:
            binding = derange(binding)
        return decide(binding, game, value_labels(self.episode, game.listener), self._last_sync)

    def sync(self, game: Game) -> None:
        """The sync round after ``game``: the speaker's exact target is revealed."""
        self.value_map.observe(game.message, value_labels(self.episode, game.target))
        self._last_sync = game


def play(episode: Episode, *, corrupted: bool = False) -> list[Decision]:
    """Every decision of the tracker over the whole episode, syncing after each game."""
    tracker = Tracker(episode, corrupted=corrupted)
    decisions = []
    for game in episode.games:
        decisions.append(tracker.decide(game))
        tracker.sync(game)
    return decisions
