"""The hypothesis-tracking rule-based listener and its corrupted twin.

The verbalizer only uses what a listener legitimately sees: the sync rounds, which reveal the
speaker's target after every game. It accumulates the value map
V: (position, token) -> {value: count} and turns it into a three-step trace:

1. sync summary - what the most recent sync round bound (position, token) to;
2. inverse prediction - the message the speaker would have sent for the listener's stimulus;
3. match comparison - how many positions of the actual message agree, hence same/different.

Decision rule (one rule for every trace, so exemplars never contradict each other): a
position *conflicts* when the predicted token differs from the received one, or when the
stimulus value has no token yet but the received token already means another value (the
code is bijective per position). A position whose value has no token yet and whose received
token means nothing else is *open*: it cannot contradict. The stimuli are "the same" exactly
when no position conflicts; step 3 states the agreements, the conflicts and the open positions.

The corrupted twin reasons from wrong bindings; how it corrupts them is a named choice
(``CORRUPTIONS``), recorded in a steering direction's card:

* ``wrong-decision`` (the default): the twin always reaches the wrong decision. Where the
  correct tracker finds no conflict, the twin uses the deranged binding (at each position the
  seen tokens are sorted and each is re-bound to the value of the next one, a cyclic shift, so
  no token keeps its value wherever a position has two or more synced values) and finds
  conflicts; where the correct tracker finds conflicts, the twin re-binds the received token
  to its own stimulus value at each conflicting position (a two-token swap), so its
  prediction equals the message and it answers "same".
* ``cyclic``: the deranged binding on every game, the seed's literal "binding map deranged by
  a cyclic shift". By the query phase every value has been synced, so no inverse prediction
  is right and every game has a conflict: the twin answers "different" throughout, wrong on
  the "same" games and right on the "different" ones (measured on cat-10shot seeds
  1000-1039: all 1,080 "same" query games wrong, all 1,080 "different" ones right).

Its traces keep the same three sentences either way.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Literal

from gapscope.s2b.episode import Episode, Game
from gapscope.s2b.templates import template

Binding = dict[int, dict[int, str]]  # position -> token -> value label
Corruption = Literal["wrong-decision", "cyclic"]
CORRUPTIONS: tuple[Corruption, ...] = ("wrong-decision", "cyclic")
DEFAULT_CORRUPTION: Corruption = "wrong-decision"


def check_corruption(name: str) -> Corruption:
    """``name`` as a corruption, or a ValueError naming the choices."""
    for corruption in CORRUPTIONS:
        if name == corruption:
            return corruption
    raise ValueError(f"corruption must be one of {', '.join(CORRUPTIONS)}, got {name!r}")


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
    conflicts: tuple[int, ...]
    same: bool
    trace: str


def decide(
    binding: Binding, game: Game, stimulus: tuple[str, ...], last_sync: Game | None
) -> Decision:
    """Reason about ``game`` from ``binding`` and write the three-step trace.

    ``stimulus`` is the listener's stimulus as value labels. The decision rule (conflicts
    decide, open positions do not) is in the module docstring.
    """
    predicted: list[int | None] = []
    conflicts: list[int] = []
    notes: dict[int, str] = {}
    for pos, (label, received) in enumerate(zip(stimulus, game.message, strict=True)):
        by_token = binding.get(pos, {})
        token = next((t for t, v in sorted(by_token.items()) if v == label), None)
        predicted.append(token)
        if token is not None:
            if token != received:
                conflicts.append(pos)
        elif received in by_token:
            conflicts.append(pos)
            notes[pos] = f"token {received} already means {by_token[received]}"
        else:
            notes[pos] = f"{label} has no token yet and token {received} means nothing else"
    agreements = sum(1 for p, r in zip(predicted, game.message, strict=True) if p == r)
    same = not conflicts
    trace = _render_trace(
        binding, game, last_sync, stimulus, predicted, agreements, conflicts, notes
    )
    return Decision(tuple(predicted), agreements, tuple(conflicts), same, trace)


def value_labels(episode: Episode, combo: tuple[int, ...]) -> tuple[str, ...]:
    """The names the verbalizer's hypotheses are about (item names; SCS section centres)."""
    return tuple(episode.domain.value_label(dim, v) for dim, v in enumerate(combo))


def _fmt_tokens(tokens: tuple[int | None, ...] | tuple[int, ...]) -> str:
    return "[" + ", ".join("?" if t is None else str(t) for t in tokens) + "]"


def _positions(positions: list[int]) -> str:
    """``position 2`` / ``positions 1, 3`` (1-based), the way step 3 names them."""
    numbers = ", ".join(str(pos + 1) for pos in positions)
    return f"position {numbers}" if len(positions) == 1 else f"positions {numbers}"


def _render_match(game: Game, agreements: int, conflicts: list[int], notes: dict[int, str]) -> str:
    """Step 3: agreements, then conflicts, then open positions, then the verdict."""
    conflict_text = "no position"
    if conflicts:
        conflict_text = _positions(conflicts) + "".join(
            f" ({notes[pos]})" for pos in conflicts if pos in notes
        )
    open_positions = [pos for pos in notes if pos not in conflicts]
    open_text = "".join(f"; {_positions([pos])} is open ({notes[pos]})" for pos in open_positions)
    return template("trace_match").format(
        message=_fmt_tokens(game.message),
        agreements=agreements,
        n=len(game.message),
        conflicts=conflict_text,
        open=open_text,
        verdict="different" if conflicts else "the same",
    )


def _render_trace(
    binding: Binding,
    game: Game,
    last_sync: Game | None,
    stimulus: tuple[str, ...],
    predicted: list[int | None],
    agreements: int,
    conflicts: list[int],
    notes: dict[int, str],
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
    match = _render_match(game, agreements, conflicts, notes)
    answer = "different" if conflicts else "same"
    return template("trace").format(sync=sync, inverse=inverse, match=match, answer=answer)


def rebind_to_message(
    binding: Binding, stimulus: tuple[str, ...], game: Game, positions: tuple[int, ...]
) -> Binding:
    """The twin's binding on a game it must call "same": at each of ``positions`` the
    received token is re-bound to the stimulus value (swapping with that value's token)."""
    out = {pos: dict(by_token) for pos, by_token in binding.items()}
    for pos in positions:
        by_token = out.setdefault(pos, {})
        received, label = game.message[pos], stimulus[pos]
        own = next((t for t, v in by_token.items() if v == label), None)
        if own is not None and received in by_token:
            by_token[own] = by_token[received]
        elif own is not None:
            del by_token[own]
        by_token[received] = label
    return out


class Tracker:
    """Plays along an episode: observes each sync round, decides each game.

    ``corrupted=True`` gives the twin that reasons from wrong bindings, corrupted the way
    ``corruption`` names (module docstring).
    """

    def __init__(
        self,
        episode: Episode,
        *,
        corrupted: bool = False,
        corruption: Corruption = DEFAULT_CORRUPTION,
    ) -> None:
        self.episode = episode
        self.corrupted = corrupted
        self.corruption = check_corruption(corruption)
        self.value_map = ValueMap()
        self._last_sync: Game | None = None

    def decide(self, game: Game) -> Decision:
        """The decision and trace for ``game`` from the sync evidence seen so far."""
        binding = self.value_map.binding()
        stimulus = value_labels(self.episode, game.listener)
        honest = decide(binding, game, stimulus, self._last_sync)
        if not self.corrupted:
            return honest
        if honest.same or self.corruption == "cyclic":
            return decide(derange(binding), game, stimulus, self._last_sync)
        twisted = rebind_to_message(binding, stimulus, game, honest.conflicts)
        return decide(twisted, game, stimulus, self._last_sync)

    def sync(self, game: Game) -> None:
        """The sync round after ``game``: the speaker's exact target is revealed."""
        self.value_map.observe(game.message, value_labels(self.episode, game.target))
        self._last_sync = game


def play(
    episode: Episode, *, corrupted: bool = False, corruption: Corruption = DEFAULT_CORRUPTION
) -> list[Decision]:
    """Every decision of the tracker over the whole episode, syncing after each game."""
    tracker = Tracker(episode, corrupted=corrupted, corruption=corruption)
    decisions = []
    for game in episode.games:
        decisions.append(tracker.decide(game))
        tracker.sync(game)
    return decisions
