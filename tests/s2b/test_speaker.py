"""The speaker role (constructivity): reference speakers, the rule listener, the exemplars,
and the task end to end with scripted speakers."""

from __future__ import annotations

import dataclasses
import itertools
import re
import statistics
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessage

from gapscope.analysis.s2b import S2BRunSummary, summarize
from gapscope.models.scripted import REQUESTS, script
from gapscope.s2b.config import resolve
from gapscope.s2b.domains import CATEGORY_REGISTRY
from gapscope.s2b.episode import build_episode
from gapscope.s2b.speaker import ConventionListener, encode, holistic_code, reference_speaker
from gapscope.s2b.task import s2b_lm
from gapscope.s2b.verbalizer import Tracker
from tests.s2b.test_doc_claims import DASH, DOC


def _run(tmp_path: Path, model: str, **task_args: object) -> EvalLog:
    logs = inspect_eval(
        s2b_lm(role="speaker", **task_args),  # type: ignore[arg-type]
        model=model,
        log_dir=str(tmp_path),
        display="none",
    )
    assert logs[0].status == "success", logs[0].error
    return logs[0]


def _own_code(messages: list[ChatMessage]) -> str:
    """A scripted compositional speaker: each item's index in its registry class, plus 1.

    It never looks at the listener, so the convention is its own, and it covers every item of
    the registry: held-out combinations get the same positional code as the rest."""
    target = re.findall(r"Your target: \[(.*?)\]", messages[-1].text)[-1].split(", ")
    index = {item: i for items in CATEGORY_REGISTRY.values() for i, item in enumerate(items)}
    return "I keep my code.\nMessage: [" + ", ".join(str(index[w] + 1) for w in target) + "]"


def test_the_listener_decides_as_the_tracker_does_for_the_posdis_speaker() -> None:
    for seed in range(6):
        episode = build_episode(resolve("cat-10shot"), seed)
        listener, tracker = ConventionListener(episode), Tracker(episode)
        for game in episode.games:
            decision = listener.decide(game, game.message)
            assert decision == tracker.decide(game).same
            if game.phase == "query":
                assert decision == game.same
            listener.sync(game, game.message)
            tracker.sync(game)


def test_the_listener_reads_tokens_so_a_synonym_is_no_conflict() -> None:
    episode = build_episode(resolve("demo"), 0)
    game = dataclasses.replace(episode.games[0], listener=episode.games[0].target)
    listener = ConventionListener(episode)
    assert listener.decide(game, (1, 2)) is True  # nothing known: every position is open
    listener.sync(game, (1, 2))
    listener.sync(game, (3, 2))  # a second token for the same value at position 1
    assert listener.decide(game, (3, 2)) is True
    assert listener.decide(game, (1, 2)) is True
    assert listener.decide(game, (4, 2)) is False  # a fresh token names a fresh value
    assert listener.decide(game, None) is None  # a malformed message is not decided
    other = dataclasses.replace(game, listener=episode.games[0].target[:1] + (9,))
    with pytest.raises(IndexError):  # a value the episode does not have is a caller's bug
        listener.decide(other, (1, 2))


def test_reference_speakers_are_seeded_and_the_holistic_code_is_injective() -> None:
    episode = build_episode(resolve("cat-10shot"), 3)
    code = holistic_code(episode)
    assert (
        len(set(code.values()))
        == len(code)
        == len(list(itertools.product(*map(range, episode.structure))))
    )
    assert code == holistic_code(episode)
    holistic = reference_speaker("holistic", episode)
    assert all(holistic(g) == code[g.target] for g in episode.games)  # consistent
    speaker, twin = reference_speaker("random", episode), reference_speaker("random", episode)
    first, again = [speaker(g) for g in episode.games], [twin(g) for g in episode.games]
    assert first == again and len(set(first)) > len(first) // 2
    assert all(1 <= t <= 10 for m in first for t in m)
    with pytest.raises(ValueError, match="not a reference speaker"):
        reference_speaker("lm", episode)


def test_the_speaker_verbalizer_keeps_known_tokens_and_takes_the_smallest_free_one() -> None:
    binding = {0: {4: "carrot", 1: "onion"}, 1: {2: "red"}}
    message, steps = encode(binding, ("carrot", "blue"), vocab_size=10)
    assert message == (4, 1)
    assert "carrot -> 4 (already in my code)" in steps
    assert "blue -> 1 (new: token 1 means nothing else there)" in steps
    full = {0: {t: "x" for t in range(1, 4)}}
    assert encode(full, ("y",), vocab_size=3)[0] == (1,)  # every token taken: reuse the first


def test_reference_speakers_order_every_measure(tmp_path: Path) -> None:
    runs: dict[str, S2BRunSummary] = {
        speaker: summarize(
            _run(tmp_path / speaker, "none", preset="cat-10shot", seeds=4, speaker=speaker)
        )
        for speaker in ("rule", "holistic", "random")
    }
    mean = {s: {k: v.mean for k, v in run.summary.items()} for s, run in runs.items()}
    # the posdis speaker in the speaker seat: the rule listener is exact on the query phase
    assert [row["zsct"] for row in runs["rule"].per_seed] == [100.0] * 4
    assert mean["rule"]["topsim"] > 0.85 and mean["rule"]["posdis"] > 0.95
    for other in ("holistic", "random"):
        # neither can be decoded on held-out combinations: the listener finds a conflict
        assert mean[other]["zsct"] == 50.0 and mean[other]["adj_zsct"] == 0.0
        for key in ("topsim", "posdis", "bosdis"):
            assert abs(mean[other][key]) < 0.1
            assert mean["rule"][key] > mean[other][key]
    assert all(mean[s]["malformed"] == 0.0 for s in runs)
    (note,) = runs["holistic"].notes
    assert "the rule listener answered every query game (216) with different" in note
    assert runs["rule"].label == "rule speaker" and runs["rule"].role == "speaker"
    # the rule speaker's bosdis is bimodal over seeds: above the others' on the mean only
    rule, holistic = ([row["bosdis"] for row in runs[s].per_seed] for s in ("rule", "holistic"))
    assert [round(v, 3) for v in rule] == [0.027, 0.268, 0.270, 0.048]
    assert rule[0] < holistic[0]
    shown = ", ".join(f"{v:.3f}" for v in rule)
    assert f"seeds 0{DASH}3: {shown}; mean {statistics.fmean(rule):.2f}" in DOC
    assert f"rule speaker's {rule[0]:.4f} is below the holistic speaker's {holistic[0]:.4f}" in DOC


def test_a_model_that_extends_its_own_code_reaches_the_ceiling(tmp_path: Path) -> None:
    model = script("own-code", _own_code)
    summary = summarize(_run(tmp_path, model, preset="cat-0shot", seeds=2))
    for row in summary.per_seed:
        assert row["zsct"] == row["zsct_strict"] == 100.0
        assert row["malformed"] == 0.0
        assert row["posdis"] > 0.9 and row["topsim"] > 0.8
    first = REQUESTS["own-code"][0]
    assert first[0].role == "system" and "You are the speaker" in first[0].text
    assert "Send a message of 4 tokens, each an integer from 1 to 10." in first[-1].text
    # the sync round tells the speaker what the listener made of its message
    later = next(r for r in REQUESTS["own-code"] if len(r) > 3)  # two episodes interleave
    assert re.search(r'it had decided "(same|different)", which was right', later[-1].text)
    rows = {r.metric: r for r in summary.rows()}
    assert rows["constructivity ZSCT [cat-0shot]"].value == 100.0
    assert rows["constructivity ZSCT [cat-0shot]"].n == 2 * 54
    assert rows["malformed [cat-0shot]"].value == 0.0
    assert rows["posdis [cat-0shot]"].unit == "" and rows["posdis [cat-0shot]"].n == 2


def test_unreadable_messages_lose_their_games_and_are_counted(tmp_path: Path) -> None:
    model = script("mute", lambda messages: "I would rather not say.")
    summary = summarize(_run(tmp_path, model, preset="demo", seeds=1))
    (row,) = summary.per_seed
    assert row["zsct"] == 0.0 and row["malformed"] == 100.0
    assert (row["topsim"], row["posdis"], row["bosdis"]) == (0.0, 0.0, 0.0)
    assert "could not read your message (no list of tokens" in REQUESTS["mute"][-1][-1].text
    # the first exemplar follows only unreadable messages: it says the code is still empty
    traces = [m.text for m in REQUESTS["mute"][-1] if m.text.startswith("Step 1")]
    assert "the listener has learned nothing from my messages yet" in traces[0]
    too_long = script("long", lambda messages: "Message: [1, 2, 3]")
    log = _run(tmp_path, too_long, preset="demo", seeds=1)
    games = log.samples[0].store.get("games") if log.samples else []
    assert {g["problem"] for g in games if not g["exemplar"]} == {"wrong_length"}
    assert "it has 3 tokens, not 2" in REQUESTS["long"][-1][-1].text


def test_strict_reading_is_scored_beside_the_flexible_one(tmp_path: Path) -> None:
    def chatty(messages: list[ChatMessage]) -> str:
        return _own_code(messages).replace("Message: ", "I send ") + " and hope it works."

    summary = summarize(_run(tmp_path, script("chatty", chatty), preset="cat-0shot", seeds=1))
    (row,) = summary.per_seed
    assert row["zsct"] == 100.0 and row["zsct_strict"] == 0.0
    assert row["adj_zsct_strict"] == 0.0


def test_exemplars_extend_the_models_own_code(tmp_path: Path) -> None:
    log = _run(tmp_path, script("own-code-10", _own_code), preset="cat-10shot", seeds=1)
    requests = REQUESTS["own-code-10"]
    episode = build_episode(resolve("cat-10shot"), 0)
    assert len(requests) == len(episode.games) - 10  # the model writes all but 10 games
    for earlier, later in itertools.pairwise(requests):
        assert [m.text for m in later[: len(earlier)]] == [m.text for m in earlier]
    traces = [m.text for m in requests[-1] if m.role == "assistant" and "Step 1" in m.text]
    assert len(traces) == 10 and all(t.splitlines()[-1].startswith("Message: [") for t in traces)
    games = log.samples[0].store.get("games") if log.samples else []
    index = {item: i for items in CATEGORY_REGISTRY.values() for i, item in enumerate(items)}
    encoded: set[tuple[int, str]] = set()  # (position, value) the model has sent a token for
    reused = 0
    for game in games:
        labels = [episode.domain.value_label(d, v) for d, v in enumerate(game["target"])]
        for pos, (label, token) in enumerate(zip(labels, game["message"], strict=True)):
            if not game["exemplar"]:
                encoded.add((pos, label))
            elif (pos, label) in encoded:  # an exemplar keeps the model's token for a value
                assert token == index[label] + 1
                reused += 1
    assert reused > 20  # most exemplar positions re-use the model's own code
    (row,) = summarize(log).per_seed
    assert row["malformed"] == 0.0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"role": "speaker", "listener": "random"}, "listener='random' applies to role=listener"),
        ({"speaker": "holistic"}, "speaker='holistic' applies to role=speaker"),
        ({"role": "speaker", "speaker": "oracle"}, "speaker must be one of"),
        ({"role": "judge"}, "role must be one of listener, speaker"),
        ({"role": "speaker", "steer": "dir", "alpha": 1.0}, "steer applies to role=listener"),
    ],
)
def test_each_role_refuses_the_other_seats_options(args: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        s2b_lm(preset="demo", **args)  # type: ignore[arg-type]


def test_speaker_role_metadata_names_both_seats(tmp_path: Path) -> None:
    log = _run(tmp_path, "none", preset="demo", seeds=2, speaker="random")
    metadata = log.eval.metadata or {}
    assert (metadata["role"], metadata["speaker"], metadata["listener"]) == (
        "speaker",
        "random",
        "rule",
    )
    assert metadata["model_calls"] == {"0": 0, "1": 0}
    assert statistics.fmean(r["malformed"] for r in summarize(log).per_seed) == 0.0


def test_run_s2b_speaker_role_from_the_command_line(tmp_path: Path) -> None:
    import json

    from typer.testing import CliRunner

    from gapscope.app.main import app

    runner = CliRunner(env={"COLUMNS": "400"})
    args = ["run", "s2b", "--role", "speaker", "--speaker", "rule", "--preset", "demo"]
    result = runner.invoke(app, [*args, "--seeds", "2", "--json", "--log-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    envelope = json.loads(result.stdout)
    assert [row["metric"] for row in envelope["summary"]] == [
        "constructivity ZSCT [demo]",
        "constructivity adj-ZSCT [demo]",
        "malformed [demo]",
        "topsim [demo]",
        "posdis [demo]",
        "bosdis [demo]",
    ]
    assert {row["model"] for row in envelope["summary"]} == {"rule speaker"}
    details = envelope["details"]
    assert (details["role"], details["speaker"]) == ("speaker", "rule")
    assert details["summary"]["zsct"] == {"mean": 100.0, "sd": 0.0, "n": 2}
    shown = runner.invoke(app, [*args, "--seeds", "1", "--log-dir", str(tmp_path)])
    assert "speaker rule (constructivity, rule listener)" in shown.output
    assert "topsim" in shown.output and "malformed %" in shown.output
    for bad, option in (
        (["--role", "judge"], "--role"),
        (["--role", "speaker", "--speaker", "oracle"], "--speaker"),
    ):
        refused = runner.invoke(app, ["run", "s2b", *bad])
        assert refused.exit_code == 2 and option in refused.output
    mixed = runner.invoke(app, ["run", "s2b", "--speaker", "holistic", "--log-dir", str(tmp_path)])
    assert mixed.exit_code == 2 and "applies to role=speaker" in mixed.output
