"""The S2B-LM Inspect task: one sample per episode seed, one model call per game.

The solver plays the episode game by game on one growing conversation. The listener is the
task's model (``listener="lm"``), the verbalizer's own decision (``"rule"``, the reference an
LM is measured against), its corrupted twin (``"corrupted"``, wrong on every query game: the
negative side of the steering pairs) or a seeded coin flip (``"random"``); only ``lm`` calls
a model, run the others with ``--model none``. ``steer``/``alpha`` add a steering direction
to the model's residual stream for every call (``gapscope.steer``). Every game's decision is
stored in the sample (``games`` in the sample store) and the scorer turns the query games into
ZSCT.
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from typing import Any, Literal

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    get_model,
)
from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    Target,
    mean,
    metric,
    scorer,
    std,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import display_counter

from gapscope.log_metadata import plain
from gapscope.models.task_steering import check_options, task_steering
from gapscope.params import real, whole
from gapscope.s2b.answers import extract
from gapscope.s2b.config import S2BConfig, resolve
from gapscope.s2b.contract import TASK, EpisodeMetadata, RunMetadata
from gapscope.s2b.episode import Episode, Game, build_episode
from gapscope.s2b.export import episode_header
from gapscope.s2b.metrics import accuracy_percent, adj_zsct, beyond_context
from gapscope.s2b.prompting import system_prompt, user_turn
from gapscope.s2b.verbalizer import Tracker

Listener = Literal["lm", "rule", "corrupted", "random"]
LISTENERS: tuple[Listener, ...] = ("lm", "rule", "corrupted", "random")
MAX_SEEDS = 10_000
"""Most episodes one run may ask for (each is a sample held in memory)."""

LISTENER_TEMPERATURE = 0.0
"""Greedy listener decisions. The S2B-LM seed scores one decision per game in a single pass
(no sampling protocol), so the task sends temperature 0 itself: a server's default (0.8 on
llama.cpp) would otherwise turn the test into sampling. Recorded in the log's plan config."""


@task(name=TASK)
def s2b_lm(
    preset: str = "cat-10shot",
    seeds: int = 4,
    first_seed: int = 0,
    listener: str = "lm",
    max_tokens: int = 256,
    steer: str | None = None,
    alpha: float = 0.0,
    **overrides: Any,
) -> Task:
    """S2B-LM receptivity test: ZSCT and adj-ZSCT over ``seeds`` episodes.

    Args:
        preset: ``scs-0shot``, ``cat-0shot``, ``cat-10shot`` (seed, Table 1) or ``demo``.
        seeds: number of episodes (seed values ``first_seed .. first_seed + seeds - 1``).
        first_seed: first episode seed.
        listener: ``lm`` (the task's model), ``rule`` (verbalizer), ``corrupted`` (its twin)
            or ``random`` (coin flip).
        max_tokens: generation budget per game decision.
        steer: a direction directory (``gapscope steer extract``) to steer the model with.
        alpha: steering strength; alpha * v is added at every token (0 = no steering).
        **overrides: any :class:`S2BConfig` field, e.g. ``k_shot=5`` or ``n_dim=4``.
    """
    if listener not in LISTENERS:
        raise ValueError(f"listener must be one of {', '.join(LISTENERS)}, got {listener!r}")
    seeds = whole("seeds", seeds, 1, MAX_SEEDS)
    first_seed = whole("first_seed", first_seed)
    max_tokens = whole("max_tokens", max_tokens, 1)
    alpha = real("alpha", alpha)
    config = resolve(preset, **overrides)
    if steer is not None and listener != "lm":
        raise ValueError(f"steer applies to the lm listener only, not to listener={listener!r}")
    steering = check_options(steer, alpha)
    samples = [
        Sample(
            id=f"seed-{seed}",
            input=f"S2B-LM episode, preset {preset}, seed {seed}",
            metadata=plain(EpisodeMetadata(seed=seed)),
        )
        for seed in range(first_seed, first_seed + seeds)
    ]
    return Task(
        dataset=MemoryDataset(samples, name=f"s2b-{preset}"),
        solver=play_episode(config, listener, max_tokens, steer, alpha),
        scorer=zsct_scorer(),
        config=GenerateConfig(temperature=LISTENER_TEMPERATURE, top_p=1.0),
        metadata=plain(
            RunMetadata(
                preset=preset,
                listener=listener,
                config=dataclasses.asdict(config),
                steer=steer,
                alpha=alpha,
                steering=steering,
                max_tokens=max_tokens,
                model_calls={
                    str(seed): model_calls(build_episode(config, seed), listener)
                    for seed in range(first_seed, first_seed + seeds)
                },
            )
        ),
    )


def model_calls(episode: Episode, listener: str) -> int:
    """How many of the episode's games the task's model answers: every game but the
    verbalizer-written exemplars, for the ``lm`` listener; none for a reference listener."""
    if listener != "lm":
        return 0
    return sum(1 for game in episode.games if game.index not in episode.exemplar_indices)


@solver
def play_episode(
    config: S2BConfig,
    listener: str,
    max_tokens: int,
    steer: str | None = None,
    alpha: float = 0.0,
) -> Solver:
    """Play every game of the sample's episode with the chosen listener.

    An episode is one sample, so Inspect's sample counter moves only at its end; a counter of
    games played across all episodes shows progress during long runs.
    """
    played = 0
    # A listener answers the current game only; a model that starts writing the next game
    # or a sync round itself is stopped there.
    generate_config = GenerateConfig(max_tokens=max_tokens, stop_seqs=["\nGame ", "\nSync round"])

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        episode = build_episode(config, int(state.metadata["seed"]))
        state.metadata["episode"] = episode_header(episode)
        messages: list[ChatMessage] = [ChatMessageSystem(content=system_prompt())]
        tracker = Tracker(episode)
        twin = Tracker(episode, corrupted=True)
        coin = random.Random(f"random-listener:{episode.seed}")
        exemplars = episode.exemplar_indices
        records = []
        for game in episode.games:
            messages.append(ChatMessageUser(content=user_turn(episode, game)))
            reference = tracker.decide(game)
            stop_reason = None
            if game.index in exemplars or listener == "rule":
                reply = reference.trace
            elif listener == "corrupted":
                reply = twin.decide(game).trace
            elif listener == "random":
                reply = f"Answer: {'same' if coin.random() < 0.5 else 'different'}"
            else:
                with task_steering(steer, alpha):
                    output = await get_model().generate(messages, config=generate_config)
                reply, stop_reason = output.completion, output.stop_reason
            messages.append(ChatMessageAssistant(content=reply))
            records.append(
                _record(game, reply, reference.same, game.index in exemplars, stop_reason)
            )
            tracker.sync(game)
            twin.sync(game)
            nonlocal played
            played += 1
            display_counter("S2B games played", str(played))
        state.messages = messages
        state.store.set("games", records)
        state.output.completion = f"{len(records)} games played"
        return state

    return solve


def _record(
    game: Game, reply: str, rule_same: bool, exemplar: bool, stop_reason: str | None
) -> dict[str, Any]:
    """What the scorer and an auditor need from one game. ``stop_reason`` is the model's
    (None for verbalizer-written games): ``model_length`` means the conversation no longer
    fit the model's context, so the reply is empty and the decision was never made."""
    said = extract(reply)
    return {
        "index": game.index,
        "phase": game.phase,
        "same": game.same,
        "exemplar": exemplar,
        "rule": rule_same,
        "strict": said.strict,
        "flexible": said.flexible,
        "reply": reply,
        "stop_reason": stop_reason,
    }


def score_games(records: list[dict[str, Any]]) -> dict[str, float]:
    """ZSCT (flexible and strict), their adjusted forms, unparsed count, support accuracy.

    Unparsed replies count as wrong. Exemplar games are written by the verbalizer, not the
    listener, so they are left out of the support accuracy.
    """
    query = [r for r in records if r["phase"] == "query"]
    support = [r for r in records if r["phase"] == "support" and not r["exemplar"]]
    zsct = accuracy_percent([r["flexible"] == r["same"] for r in query])
    strict = accuracy_percent([r["strict"] == r["same"] for r in query])
    return {
        "zsct": zsct,
        "adj_zsct": adj_zsct(zsct),
        "zsct_strict": strict,
        "adj_zsct_strict": adj_zsct(strict),
        "unparsed": float(sum(r["flexible"] is None for r in query)),
        "support_acc": accuracy_percent([r["flexible"] == r["same"] for r in support]),
    }


@metric
def adjusted_mean() -> Metric:
    """adj(mean ZSCT) over the samples: the seed's headline adj-ZSCT (see ``metrics``)."""

    def compute(scores: list[SampleScore]) -> float:
        values = [score.score.as_float() for score in scores]
        return adj_zsct(sum(values) / len(values)) if values else 0.0

    return compute


# adj-ZSCT over seeds is adj(mean ZSCT), shown on the ZSCT keys; the per-episode adj values
# stay in each sample's score but are not averaged (clipping first would inflate them).
_METRICS = {
    "zsct": [mean(), std(), adjusted_mean()],
    "zsct_strict": [mean(), std(), adjusted_mean()],
    "unparsed": [mean(), std()],
    "support_acc": [mean(), std()],
}


def query_answers(records: list[dict[str, Any]]) -> str:
    """The listener's query-phase decisions in brief, for the viewer's ANSWER column: how
    often it said same, different, or nothing that parsed (``same 54`` at a glance says the
    listener answers every query game the same way)."""
    said = Counter(
        {True: "same", False: "different", None: "unparsed"}[r["flexible"]]
        for r in records
        if r["phase"] == "query"
    )
    return ", ".join(
        f"{word} {said[word]}" for word in ("same", "different", "unparsed") if said[word]
    )


@scorer(metrics=_METRICS)
def zsct_scorer() -> Scorer:
    """Per-episode ZSCT; the task metrics are their mean and sd over seeds and adj(mean)."""

    async def score(state: TaskState, target: Target) -> Score:
        records: list[dict[str, Any]] = state.store.get("games", [])
        values = score_games(records)
        beyond = beyond_context(records)
        return Score(
            value=values,  # type: ignore[arg-type]
            answer=query_answers(records),
            explanation=(
                f"ZSCT {values['zsct']:.1f} (strict {values['zsct_strict']:.1f}) over "
                f"{sum(r['phase'] == 'query' for r in records)} query games, "
                f"{int(values['unparsed'])} unparsed"
                + (f", {len(beyond)} beyond the model's context" if beyond else "")
            ),
        )

    return score
