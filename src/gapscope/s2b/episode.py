"""Episode construction: latent structure, permutation, posdis speaker and the two phases.

An episode is built entirely from its seed before any model is asked anything, so the same
seed gives the same games byte for byte whichever listener plays them.

Protocol (seed, Section 2.4; choices the seed leaves open are documented in docs/s2b.md):
- structure d(1..N_dim), each d(i) uniform in [v_min, v_max];
- a fresh permutation of the speaker vocabulary {1..vocab_size}, shared by all positions;
- posdis speaker: value l_i at position i is token t_i = l_i + 1, then permuted;
- query set: ``query_size`` combinations held out, never from a random covering diagonal, so
  that every value keeps at least one supporting combination;
- supporting phase: targets drawn from the other combinations until every value of every
  dimension has appeared in at least S targets (each draw must raise the count of a value that
  is still short, so no game is wasted);
- each phase is balanced: floor(n/2) "same" games, the rest "different", in shuffled order.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from dataclasses import dataclass
from typing import Literal

from gapscope.s2b.config import S2BConfig
from gapscope.s2b.domains import CategoricalDomain, SCSDomain, StimulusDomain

Phase = Literal["support", "query"]
Combo = tuple[int, ...]


@dataclass(frozen=True)
class Game:
    """One referential game: the speaker sees ``target``, the listener sees ``listener``.

    ``message`` is what the listener receives (already permuted). ``listener_view`` and
    ``target_view`` are the rendered stimuli: the listener's own, and the speaker's target as
    the sync round reveals it after the decision.
    """

    index: int
    phase: Phase
    target: Combo
    listener: Combo
    same: bool
    message: tuple[int, ...]
    listener_view: tuple[str, ...]
    target_view: tuple[str, ...]


@dataclass(frozen=True)
class Episode:
    """All games of one episode plus what an auditor needs to check them."""

    seed: int
    config: S2BConfig
    structure: tuple[int, ...]
    permutation: tuple[int, ...]
    domain: StimulusDomain
    games: tuple[Game, ...]

    @property
    def support_games(self) -> tuple[Game, ...]:
        return tuple(g for g in self.games if g.phase == "support")

    @property
    def query_games(self) -> tuple[Game, ...]:
        return tuple(g for g in self.games if g.phase == "query")

    @property
    def exemplar_indices(self) -> frozenset[int]:
        """Games whose listener turn is a verbalizer trace: the last k supporting games,
        where the value map already holds the most sync evidence."""
        support = self.support_games
        k = self.config.k_shot
        return frozenset(g.index for g in support[len(support) - k :]) if k else frozenset()


def speak(target: Combo, permutation: tuple[int, ...]) -> tuple[int, ...]:
    """The posdis speaker's message as the listener receives it: pi(l_i + 1) per position."""
    return tuple(permutation[value] for value in target)


def build_episode(config: S2BConfig, seed: int) -> Episode:
    """Build the deterministic episode for ``seed``."""
    rng = random.Random(f"s2b-lm:{seed}")
    structure = tuple(rng.randint(config.v_min, config.v_max) for _ in range(config.n_dim))
    # permutation[t - 1] is the token the listener sees for speaker token t.
    permutation = tuple(rng.sample(range(1, config.vocab_size + 1), config.vocab_size))
    domain: StimulusDomain = (
        CategoricalDomain.sample(structure, rng)
        if config.domain == "categorical"
        else SCSDomain(structure)
    )
    all_combos = list(itertools.product(*(range(d) for d in structure)))
    query = _hold_out(all_combos, structure, config.query_size, rng)
    held_out = set(query)
    train = [c for c in all_combos if c not in held_out]
    support_targets = _support_targets(train, structure, config.coverage, rng)

    phases: tuple[tuple[Phase, list[Combo], list[Combo]], ...] = (
        ("support", support_targets, train),
        ("query", query, all_combos),
    )
    games: list[Game] = []
    for phase, targets, pool in phases:
        for target, same in zip(targets, _balanced_flags(len(targets), rng), strict=True):
            listener = target if same else _distractor(target, structure, pool, config, rng)
            games.append(
                Game(
                    index=len(games),
                    phase=phase,
                    target=target,
                    listener=listener,
                    same=same,
                    message=speak(target, permutation),
                    listener_view=domain.render(listener, rng),
                    target_view=domain.render(target, rng),
                )
            )
    return Episode(seed, config, structure, permutation, domain, tuple(games))


def _hold_out(
    combos: list[Combo], structure: tuple[int, ...], size: int, rng: random.Random
) -> list[Combo]:
    """Pick ``size`` query combinations uniformly among those off a random covering diagonal.

    The diagonal (combination k takes value perm_i[k mod d(i)] on dimension i, for
    k < max d(i)) contains every value of every dimension and always stays in the supporting
    set, so every value keeps a supporting combination; config validation bounds ``size`` by
    prod d(i) - max d(i), the number of combinations off the diagonal.
    """
    perms = [rng.sample(range(d), d) for d in structure]
    diagonal = {
        tuple(perm[k % d] for perm, d in zip(perms, structure, strict=True))
        for k in range(max(structure))
    }
    return rng.sample([c for c in combos if c not in diagonal], size)


def _support_targets(
    train: list[Combo], structure: tuple[int, ...], coverage: int, rng: random.Random
) -> list[Combo]:
    """Draw targets until every (dimension, value) has appeared in >= ``coverage`` targets."""
    seen: Counter[tuple[int, int]] = Counter()
    short = {(dim, v) for dim, d in enumerate(structure) for v in range(d)}
    targets: list[Combo] = []
    while short:
        useful = [c for c in train if any((dim, v) in short for dim, v in enumerate(c))]
        target = rng.choice(useful)
        targets.append(target)
        for dim, v in enumerate(target):
            seen[(dim, v)] += 1
            if seen[(dim, v)] >= coverage:
                short.discard((dim, v))
    return targets


def _balanced_flags(n: int, rng: random.Random) -> list[bool]:
    """floor(n/2) True ("same") and the rest False, shuffled."""
    flags = [True] * (n // 2) + [False] * (n - n // 2)
    rng.shuffle(flags)
    return flags


def _distractor(
    target: Combo,
    structure: tuple[int, ...],
    pool: list[Combo],
    config: S2BConfig,
    rng: random.Random,
) -> Combo:
    """A listener stimulus with a different latent meaning than ``target``.

    ``one_dim``: change one uniformly chosen dimension to another of its values; in the
    supporting phase the result must be a supporting combination (held-out combinations never
    appear before the query phase), falling back to any supporting combination if no
    one-dimension neighbour is one. ``any``: any other combination of the pool.
    """
    if config.distractor == "one_dim":
        pool_set = set(pool)
        changed = (
            (*target[:dim], v, *target[dim + 1 :])
            for dim in range(len(target))
            for v in range(structure[dim])
            if v != target[dim]
        )
        neighbours = [c for c in changed if c in pool_set]
        if neighbours:
            return rng.choice(neighbours)
    return rng.choice([c for c in pool if c != target])
