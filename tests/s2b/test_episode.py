"""Invariants of episode construction that the ZSCT's meaning rests on."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gapscope.s2b.config import PRESETS, S2BConfig, resolve
from gapscope.s2b.domains import CATEGORY_REGISTRY
from gapscope.s2b.episode import build_episode, speak

configs = st.builds(
    S2BConfig,
    domain=st.sampled_from(["categorical", "scs"]),
    n_dim=st.integers(2, 4),
    v_min=st.just(3),
    v_max=st.integers(3, 5),
    coverage=st.integers(1, 4),
    query_size=st.integers(1, 6),
    k_shot=st.integers(0, 3),
    distractor=st.sampled_from(["one_dim", "any"]),
)


@settings(max_examples=60, deadline=None)
@given(config=configs, seed=st.integers(0, 10_000))
def test_support_phase_covers_every_value_at_least_s_times(config: S2BConfig, seed: int) -> None:
    episode = build_episode(config, seed)
    counts = Counter((dim, v) for g in episode.support_games for dim, v in enumerate(g.target))
    for dim, d in enumerate(episode.structure):
        for value in range(d):
            assert counts[(dim, value)] >= config.coverage, (dim, value)


@settings(max_examples=60, deadline=None)
@given(config=configs, seed=st.integers(0, 10_000))
def test_query_combinations_are_held_out_of_the_supporting_phase(
    config: S2BConfig, seed: int
) -> None:
    episode = build_episode(config, seed)
    query_targets = {g.target for g in episode.query_games}
    assert len(query_targets) == config.query_size  # distinct combinations
    support_stimuli = {g.target for g in episode.support_games} | {
        g.listener for g in episode.support_games
    }
    assert not query_targets & support_stimuli
    # the supporting phase comes first
    phases = [g.phase for g in episode.games]
    assert phases == sorted(phases, key=lambda p: p != "support")


@settings(max_examples=60, deadline=None)
@given(config=configs, seed=st.integers(0, 10_000))
def test_each_phase_is_balanced_and_labels_are_true(config: S2BConfig, seed: int) -> None:
    episode = build_episode(config, seed)
    for games in (episode.support_games, episode.query_games):
        n_same = sum(g.same for g in games)
        assert n_same == len(games) // 2
        for g in games:
            assert (g.target == g.listener) == g.same
            if not g.same and config.distractor == "one_dim" and g.phase == "query":
                assert sum(a != b for a, b in zip(g.target, g.listener, strict=True)) == 1


@settings(max_examples=60, deadline=None)
@given(config=configs, seed=st.integers(0, 10_000))
def test_permutation_is_a_bijection_and_the_speaker_is_posdis(config: S2BConfig, seed: int) -> None:
    episode = build_episode(config, seed)
    vocab = range(1, config.vocab_size + 1)
    assert sorted(episode.permutation) == list(vocab)
    for g in episode.games:
        # t_i = l_i + 1 before the permutation
        assert g.message == tuple(episode.permutation[(v + 1) - 1] for v in g.target)
    # within a position, distinct values always give distinct tokens
    for pos, d in enumerate(episode.structure):
        tokens = {speak((0,) * pos + (v,), episode.permutation)[pos] for v in range(d)}
        assert len(tokens) == d


def test_structure_respects_bounds_and_categories_are_distinct() -> None:
    config = S2BConfig(n_dim=5, v_min=2, v_max=6, query_size=4, coverage=2)
    for seed in range(50):
        episode = build_episode(config, seed)
        assert all(2 <= d <= 6 for d in episode.structure)
        described = episode.domain.describe()
        categories = described["categories"]
        assert isinstance(categories, list) and len(set(categories)) == 5
        items = described["items"]
        assert isinstance(items, list)
        for cat, chosen, d in zip(categories, items, episode.structure, strict=True):
            assert len(chosen) == d == len(set(chosen))
            assert set(chosen) <= set(CATEGORY_REGISTRY[cat])


def test_permutation_differs_between_episodes() -> None:
    config = resolve("cat-10shot")
    perms = {build_episode(config, seed).permutation for seed in range(20)}
    assert len(perms) == 20


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_same_seed_gives_the_same_episode_byte_for_byte(preset: str) -> None:
    config = resolve(preset)
    assert build_episode(config, 7) == build_episode(config, 7)
    assert build_episode(config, 7) != build_episode(config, 8)


def test_scs_stimuli_lie_in_the_unit_box_and_near_their_section() -> None:
    config = resolve("scs-0shot")
    episode = build_episode(config, 3)
    for g in episode.games:
        for dim, (text, value) in enumerate(zip(g.listener_view, g.listener, strict=True)):
            x = float(text)
            assert -1.0 <= x <= 1.0
            width = 2.0 / episode.structure[dim]
            centre = -1.0 + width * (value + 0.5)
            assert abs(x - centre) <= width  # within one section width of its centre


def test_categorical_stimuli_render_their_latent_values() -> None:
    episode = build_episode(resolve("cat-0shot"), 1)
    items = episode.domain.describe()["items"]
    assert isinstance(items, list)
    for g in episode.games:
        assert g.listener_view == tuple(items[d][v] for d, v in enumerate(g.listener))
        assert g.target_view == tuple(items[d][v] for d, v in enumerate(g.target))


def test_exemplars_are_the_last_k_supporting_games() -> None:
    episode = build_episode(resolve("cat-10shot"), 0)
    support = [g.index for g in episode.support_games]
    assert sorted(episode.exemplar_indices) == support[-10:]
    assert build_episode(resolve("cat-0shot"), 0).exemplar_indices == frozenset()


def test_every_combination_is_reachable_as_a_query() -> None:
    # held-out sets vary with the seed: over many seeds every combination gets held out
    config = S2BConfig(n_dim=2, v_min=3, v_max=3, query_size=3, coverage=1)
    held = set()
    for seed in range(200):
        held |= {g.target for g in build_episode(config, seed).query_games}
    assert held == set(itertools.product(range(3), range(3)))
