"""The hypothesis-tracking verbalizer, its three-step traces, and its corrupted twin."""

from __future__ import annotations

import re

import pytest

from gapscope.s2b.config import resolve
from gapscope.s2b.episode import build_episode
from gapscope.s2b.verbalizer import Tracker, ValueMap, derange, play, value_labels


def test_value_map_counts_sync_evidence_per_position_and_token() -> None:
    vm = ValueMap()
    vm.observe((8, 5, 6), ("carrot", "blue", "circle"))
    vm.observe((8, 3, 6), ("carrot", "red", "circle"))
    assert vm.counts[(0, 8)] == {"carrot": 2}
    assert vm.counts[(1, 5)] == {"blue": 1}
    assert vm.counts[(1, 3)] == {"red": 1}
    assert vm.binding() == {0: {8: "carrot"}, 1: {3: "red", 5: "blue"}, 2: {6: "circle"}}


def test_same_token_at_two_positions_binds_separately() -> None:
    vm = ValueMap()
    vm.observe((4, 4), ("dog", "gold"))
    assert vm.binding() == {0: {4: "dog"}, 1: {4: "gold"}}


@pytest.mark.parametrize("preset", ["cat-10shot", "cat-0shot", "scs-0shot", "demo"])
def test_rule_listener_is_perfect_on_every_query_game(preset: str) -> None:
    for seed in range(25):
        episode = build_episode(resolve(preset), seed)
        decisions = play(episode)
        for game, decision in zip(episode.games, decisions, strict=True):
            if game.phase == "query":
                assert decision.same == game.same, (seed, game.index)


def test_trace_has_the_three_steps_in_order_and_its_numbers_are_right() -> None:
    episode = build_episode(resolve("cat-10shot"), 0)
    decisions = play(episode)
    for game, decision in zip(episode.games, decisions, strict=True):
        lines = decision.trace.splitlines()
        assert [line.split(" (")[0] for line in lines[:3]] == ["Step 1", "Step 2", "Step 3"]
        assert "sync summary" in lines[0]
        assert "inverse prediction" in lines[1]
        assert "match comparison" in lines[2]
        assert lines[3] == f"Answer: {'same' if decision.same else 'different'}"
        n = len(game.message)
        assert f"agrees with the prediction at {decision.agreements} of {n} positions" in lines[2]
        stimulus = ", ".join(value_labels(episode, game.listener))
        assert f"for my stimulus [{stimulus}]" in lines[1]
    # once every value has been synced, the prediction of a "same" game is the message itself
    n_query = len(episode.query_games)
    for game, decision in zip(episode.query_games, decisions[-n_query:], strict=True):
        if game.same:
            assert decision.predicted == game.message


def test_sync_summary_reports_the_previous_game() -> None:
    episode = build_episode(resolve("cat-10shot"), 2)
    tracker = Tracker(episode)
    first = tracker.decide(episode.games[0])
    assert "no sync round has happened yet" in first.trace
    tracker.sync(episode.games[0])
    second = tracker.decide(episode.games[1])
    message = ", ".join(str(t) for t in episode.games[0].message)
    assert f"showed message [{message}]" in second.trace
    for pos, (tok, label) in enumerate(
        zip(episode.games[0].message, episode.games[0].target_view, strict=True)
    ):
        assert f"position {pos + 1}: {tok} = {label}" in second.trace


def test_derange_moves_every_token_off_its_value_when_a_position_has_two() -> None:
    binding = {0: {1: "a", 5: "b", 9: "c"}, 1: {2: "x"}}
    shifted = derange(binding)
    assert shifted[0] == {1: "b", 5: "c", 9: "a"}
    assert shifted[1] == {2: "x"}  # a single observed value cannot be deranged
    assert sorted(shifted[0].values()) == sorted(binding[0].values())


def test_corrupted_twin_reaches_the_wrong_decision_on_every_query_game() -> None:
    for seed in range(25):
        episode = build_episode(resolve("cat-10shot"), seed)
        n_query = len(episode.query_games)
        good = play(episode)[-n_query:]
        bad = play(episode, corrupted=True)[-n_query:]
        for game, g, b in zip(episode.query_games, good, bad, strict=True):
            # surface-coherent: the same three steps, the same shape of sentences
            assert re.sub(r"\d+|\[.*?\]|= \w+|-> \w+", "", b.trace).count("Step") == 3
            assert g.same == game.same
            assert b.same != game.same, (seed, game.index)  # wrong on same and different games
            assert b.predicted != g.predicted  # it reasons from wrong bindings
            if game.same:  # the deranged binding: no inverse prediction is right
                assert all(p != q for p, q in zip(b.predicted, g.predicted, strict=True))


def test_exemplar_traces_teach_one_rule_for_unknown_bindings() -> None:
    # conflicts decide: "the same" exactly when no position conflicts, however many agree
    verdicts: dict[tuple[int, str], set[str]] = {}
    rule = re.compile(
        r"at (\d+) of \d+ positions and conflicts at (no position|positions? [\d, ]+)"
    )
    for seed in range(20):
        episode = build_episode(resolve("cat-10shot"), seed)
        decisions = play(episode)
        for index in episode.exemplar_indices:
            step3 = decisions[index].trace.splitlines()[2]
            found = rule.search(step3)
            assert found, step3
            agreements, conflicts = int(found.group(1)), found.group(2)
            verdict = "same" if step3.endswith("the same.") else "different"
            assert (verdict == "same") == (conflicts == "no position"), step3
            verdicts.setdefault((agreements, conflicts == "no position"), set()).add(verdict)
    assert all(len(v) == 1 for v in verdicts.values()), verdicts


def test_open_position_is_explained_and_does_not_contradict() -> None:
    episode = build_episode(resolve("cat-10shot"), 2)
    decisions = play(episode)
    with_open = [d for d in decisions if "is open (" in d.trace]
    assert with_open, "seed 2 has games with values not synced yet"
    for decision in with_open:
        assert "has no token yet and token" in decision.trace
