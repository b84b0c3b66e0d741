"""The S2B-LM Inspect task end to end: listeners, scoring, logs."""

from __future__ import annotations

import itertools
import statistics
from pathlib import Path

from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessage

from gapscope.analysis.s2b import summarize
from gapscope.models.scripted import REQUESTS, script
from gapscope.s2b.config import resolve
from gapscope.s2b.episode import build_episode
from gapscope.s2b.task import BEHAVIOUR, s2b_lm, score_games


def _run(tmp_path: Path, model: str, **task_args: object) -> EvalLog:
    logs = inspect_eval(
        s2b_lm(**task_args),  # type: ignore[arg-type]
        model=model,
        log_dir=str(tmp_path),
        display="none",
    )
    assert logs[0].status == "success", logs[0].error
    return logs[0]


def test_rule_listener_reaches_ceiling_on_cat_10shot_over_4_seeds(tmp_path: Path) -> None:
    summary = summarize(_run(tmp_path, "none", preset="cat-10shot", seeds=4, listener="rule"))
    assert len(summary.per_seed) == 4
    assert all(row["zsct"] >= 95.0 for row in summary.per_seed)
    assert summary.summary["zsct"].mean >= 95.0
    assert summary.summary["adj_zsct"].mean >= 90.0
    assert summary.summary["unparsed"].mean == 0.0


def test_corrupted_listener_is_wrong_on_every_query_game(tmp_path: Path) -> None:
    summary = summarize(_run(tmp_path, "none", preset="cat-10shot", seeds=2, listener="corrupted"))
    assert [row["zsct"] for row in summary.per_seed] == [0.0, 0.0]
    assert summary.summary["unparsed"].mean == 0.0


def test_seed_headline_adj_zsct_is_adj_of_mean_zsct() -> None:
    # four coin-flip-like episodes: clipping per episode then averaging would give 10
    from gapscope.s2b.metrics import SeedSummary

    zsct = SeedSummary.of([50.0, 50.0, 30.0, 70.0])
    assert zsct.adjusted().mean == 0.0
    assert zsct.adjusted().sd == 2 * zsct.sd


def test_random_listener_is_near_chance(tmp_path: Path) -> None:
    log = _run(tmp_path, "none", preset="cat-10shot", seeds=4, listener="random")
    summary = summarize(log)
    # 216 fair coin flips: 40..60% is a > 99% binomial interval
    assert 40.0 <= summary.summary["zsct"].mean <= 60.0
    # the headline adj-ZSCT is adj(mean ZSCT), in the summary and in the log's metrics
    mean_zsct = summary.summary["zsct"].mean
    assert summary.summary["adj_zsct"].mean == max(0.0, 2 * mean_zsct - 100)
    assert log.results is not None
    zsct_metrics = next(s for s in log.results.scores if s.name == "zsct").metrics
    assert zsct_metrics["gapscope/adjusted_mean"].value == summary.summary["adj_zsct"].mean


def test_random_listener_averages_fifty_percent_over_many_episodes() -> None:
    import random

    config = resolve("cat-10shot")
    accuracies = []
    for seed in range(300):
        coin = random.Random(f"random-listener:{seed}")
        games = build_episode(config, seed).query_games
        accuracies.append(statistics.fmean((coin.random() < 0.5) == g.same for g in games))
    assert abs(statistics.fmean(accuracies) - 0.5) < 0.03


def test_lm_listener_that_always_says_same_scores_exactly_chance(tmp_path: Path) -> None:
    model = script("always-same", lambda messages: "Answer: same")
    summary = summarize(_run(tmp_path, model, preset="cat-0shot", seeds=2))
    for row in summary.per_seed:
        assert row["zsct"] == 50.0  # balanced query phase: 5 same, 5 different
        assert row["adj_zsct"] == 0.0


def test_unparseable_replies_count_as_wrong_and_are_counted(tmp_path: Path) -> None:
    model = script("mumbles", lambda messages: "hmm, hard to say")
    summary = summarize(_run(tmp_path, model, preset="demo", seeds=1))
    row = summary.per_seed[0]
    assert row["zsct"] == 0.0
    assert row["unparsed"] == 4.0


def test_conversation_only_grows_and_exemplars_are_verbalizer_traces(tmp_path: Path) -> None:
    model = script("flexible", lambda messages: "They are the same, I think.")
    log = _run(tmp_path, model, preset="cat-10shot", seeds=1)
    requests = REQUESTS["flexible"]
    episode = build_episode(resolve("cat-10shot"), 0)
    # the LM is asked on every game but the 10 exemplars
    assert len(requests) == len(episode.games) - 10
    for earlier, later in itertools.pairwise(requests):
        assert [m.text for m in later[: len(earlier)]] == [m.text for m in earlier]
    # the last request holds the 10 exemplar traces as assistant turns
    traces = [m.text for m in requests[-1] if m.role == "assistant" and "Step 1" in m.text]
    assert len(traces) == 10
    # flexible extraction reads the reply, strict does not
    row = summarize(log).per_seed[0]
    assert row["zsct"] == 50.0 and row["zsct_strict"] == 0.0


def test_zero_shot_history_has_no_traces(tmp_path: Path) -> None:
    model = script("zero", lambda messages: "Answer: different")
    _run(tmp_path, model, preset="cat-0shot", seeds=1)
    last = REQUESTS["zero"][-1]
    assert not any("Step 1" in m.text for m in last)
    assert sum("Sync round for game" in m.text for m in last) == len(last) // 2 - 1


def test_score_games_adjusts_and_ignores_exemplars() -> None:
    records = [
        {"phase": "query", "same": True, "flexible": True, "strict": None, "exemplar": False},
        {"phase": "query", "same": False, "flexible": True, "strict": True, "exemplar": False},
        {"phase": "query", "same": True, "flexible": True, "strict": True, "exemplar": False},
        {"phase": "query", "same": False, "flexible": None, "strict": None, "exemplar": False},
        {"phase": "support", "same": True, "flexible": False, "strict": False, "exemplar": True},
        {"phase": "support", "same": True, "flexible": True, "strict": True, "exemplar": False},
    ]
    scores = score_games(records)
    assert scores["zsct"] == 50.0
    assert scores["adj_zsct"] == 0.0
    assert scores["zsct_strict"] == 25.0
    assert scores["unparsed"] == 1.0
    assert scores["support_acc"] == 100.0


def test_games_past_the_model_context_are_named_not_silently_wrong(tmp_path: Path) -> None:
    """SmolLM2's 8,192-token window ends inside a cat-10shot episode; the engine then returns an
    empty reply with stop reason ``model_length``. Those games must be counted and said."""
    from inspect_ai.model import ModelOutput
    from rich.console import Console

    from gapscope.analysis.s2b_tables import print_s2b

    calls = itertools.count()

    def short_context(messages: object) -> str | ModelOutput:
        if next(calls) < 3:
            return "Answer: same"
        return ModelOutput.from_content("short", "", stop_reason="model_length")

    log = _run(tmp_path, script("short", short_context), preset="demo", seeds=1)
    summary = summarize(log)
    (row,) = summary.per_seed
    games = log.samples[0].store.get("games") if log.samples else []
    beyond = [g for g in games if g["stop_reason"] == "model_length"]
    queries = [g for g in beyond if g["phase"] == "query"]
    assert beyond and queries and row["unparsed"] == len(queries)
    (note,) = summary.notes
    assert f"{len(beyond)} games (from game {beyond[0]['index']} on)" in note
    assert "context window" in note
    score = next(iter(log.samples[0].scores.values())) if log.samples else None
    assert score is not None and f"{len(beyond)} beyond the model's context" in str(
        score.explanation
    )
    console = Console(record=True, width=200)
    print_s2b(summary, console)
    text = console.export_text()
    assert "warning:" in text and "context window" in text


def test_a_steered_run_on_its_directions_own_episodes_says_it_is_not_held_out(
    tmp_path: Path,
) -> None:
    log = _run(tmp_path, "none", preset="demo", seeds=2, first_seed=0, listener="rule")
    assert log.eval.metadata is not None
    config = log.eval.metadata["config"]
    steering = {"kind": "clb", "extraction": {"preset": "demo", "seeds": [1, 2], "config": config}}
    log.eval.metadata["steering"] = steering
    (note,) = [n for n in summarize(log).notes if "not held out" in n]
    assert "seeds [1]" in note
    steering["extraction"]["seeds"] = [1000, 1001]  # run steer's and steer extract's default
    assert not [n for n in summarize(log).notes if "not held out" in n]


def test_a_speaker_plan_counts_the_transcript_its_model_reads(tmp_path: Path) -> None:
    """The plan's prompt size for a speaker run is what the model really reads (each call the
    whole transcript: its own cap-length replies and every sync round) within 25 %; before
    the sync rounds and reply lengths were counted it was under half."""
    read: list[int] = []
    reply = "Message: " + " ".join(["tok"] * 29)  # about a 32-token reply at the cap

    def speaker(messages: list[ChatMessage]) -> str:
        read.append(sum(len(m.text) for m in messages))
        return reply

    task = s2b_lm(preset="demo", seeds=2, role="speaker", max_tokens=32)
    planned = sum((task.metadata or {})["prompt_chars"].values())
    log = _run(
        tmp_path,
        script("cap-speaker", speaker),
        preset="demo",
        seeds=2,
        role="speaker",
        max_tokens=32,
    )
    assert len(read) == sum((task.metadata or {})["model_calls"].values())
    assert 0.8 <= planned / sum(read) <= 1.25, (planned, sum(read))
    assert log.status == "success"


def test_roles_are_told_apart_in_inspect_and_read_as_one_task(tmp_path: Path) -> None:
    """A study's S2B-LM logs differ in what ``inspect view`` and Inspect's display show (the
    tags and the display name) while staying the one task ``s2b_lm`` the readers find."""
    runs = {
        "model listener": _run(tmp_path, script("same", lambda _: "Answer: same"), preset="demo"),
        "rule listener": _run(tmp_path, "none", preset="demo", listener="rule"),
        "holistic speaker": _run(
            tmp_path, "none", preset="demo", role="speaker", speaker="holistic"
        ),
    }
    shown = {
        what: (log.eval.task_display_name, set(log.eval.tags or [])) for what, log in runs.items()
    }
    assert shown == {
        "model listener": ("s2b_lm listener: lm, demo", {"listener", "listener=lm", "demo"}),
        "rule listener": (
            "s2b_lm listener: rule (reference), demo",
            {"listener", "listener=rule", "demo", "reference"},
        ),
        "holistic speaker": (
            "s2b_lm speaker: holistic (reference), demo",
            {"speaker", "speaker=holistic", "demo", "reference"},
        ),
    }
    assert {log.eval.task for log in runs.values()} == {"gapscope/s2b_lm"}
    assert {log.eval.task_version for log in runs.values()} == {BEHAVIOUR.version}
    assert [summarize(log).role for log in runs.values()] == ["listener", "listener", "speaker"]
