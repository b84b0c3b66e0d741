"""The S2B-LM Inspect task: one sample per episode seed, one model call per game.

The solver plays the episode game by game on one growing conversation. The listener is the
task's model (``listener="lm"``), the verbalizer's own decision (``"rule"``, the reference an
LM is measured against), its corrupted twin (``"corrupted"``, wrong on every query game: the
negative side of the steering pairs) or a seeded coin flip (``"random"``); only ``lm`` calls
a model, run the others with ``--model none``. ``steer``/``alpha`` add a steering direction
to the model's residual stream for every call (``gapscope.steer``). Every game's decision is
stored in the sample (``games`` in the sample store) and the scorer turns the query games into
ZSCT.

``role="speaker"`` swaps the seats (constructivity, unsteered): the tested system writes each
game's message for its target (``speaker="lm"``, or a reference speaker ``rule``/``holistic``/
``random`` that calls no model) and the rule listener of :mod:`gapscope.s2b.speaker` decodes
it; the constructivity scorer turns the listener's query decisions into ZSCT and the messages
into the emergent-language measures.
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from typing import Any, Literal

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    CachePolicy,
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
from gapscope.models import check_options, is_served, steered, within_run_cap
from gapscope.params import real, whole
from gapscope.s2b import answers, prompting
from gapscope.s2b.answers import extract
from gapscope.s2b.config import S2BConfig, resolve
from gapscope.s2b.contract import TASK, EpisodeMetadata, RunMetadata, SpeakerRunMetadata
from gapscope.s2b.episode import Episode, Game, build_episode
from gapscope.s2b.export import episode_header
from gapscope.s2b.language import bosdis, posdis, topsim
from gapscope.s2b.messages import ReadMessage, message_line, read_message
from gapscope.s2b.metrics import accuracy_percent, adj_zsct, beyond_context
from gapscope.s2b.prompting import (
    Heard,
    speaker_system_prompt,
    speaker_user_turn,
    system_prompt,
    user_turn,
)
from gapscope.s2b.speaker import SPEAKERS, ConventionListener, exemplar, reference_speaker
from gapscope.s2b.templates import template as s2b_templates
from gapscope.s2b.verbalizer import Tracker
from gapscope.task_version import Behaviour

Listener = Literal["lm", "rule", "corrupted", "random"]
LISTENERS: tuple[Listener, ...] = ("lm", "rule", "corrupted", "random")
Role = Literal["listener", "speaker"]
ROLES: tuple[Role, ...] = ("listener", "speaker")
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
    role: str = "listener",
    speaker: str = "lm",
    **overrides: Any,
) -> Task:
    """S2B-LM receptivity (or, ``role="speaker"``, constructivity) test over ``seeds`` episodes.

    Args:
        preset: ``scs-0shot``, ``cat-0shot``, ``cat-10shot`` (seed, Table 1) or ``demo``.
        seeds: number of episodes (seed values ``first_seed .. first_seed + seeds - 1``).
        first_seed: first episode seed.
        listener: ``lm`` (the task's model), ``rule`` (verbalizer), ``corrupted`` (its twin)
            or ``random`` (coin flip).
        max_tokens: generation budget per game decision.
        steer: a direction directory (``gapscope steer extract``) to steer the model with.
        alpha: steering strength; alpha * v is added at every token (0 = no steering).
        role: ``listener`` (receptivity: the model decodes the posdis speaker) or ``speaker``
            (constructivity: the model writes the messages, the rule listener decodes them).
        speaker: in the speaker role, ``lm`` (the task's model) or a reference speaker:
            ``rule`` (posdis), ``holistic`` (consistent, non-compositional) or ``random``.
        **overrides: any :class:`S2BConfig` field, e.g. ``k_shot=5`` or ``n_dim=4``.
    """
    _check_seats(role, listener, speaker)
    seeds = whole("seeds", seeds, 1, MAX_SEEDS)
    first_seed = whole("first_seed", first_seed)
    max_tokens = whole("max_tokens", max_tokens, 1)
    alpha = real("alpha", alpha)
    config = resolve(preset, **overrides)
    if steer is not None and role == "speaker":
        raise ValueError("steer applies to role=listener (the dosage curves read listener runs)")
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
    tested = listener if role == "listener" else speaker
    reads = {
        seed: call_prompt_chars(build_episode(config, seed), tested, role, max_tokens)
        for seed in range(first_seed, first_seed + seeds)
    }
    settings = RunMetadata(
        preset=preset,
        listener=listener if role == "listener" else "rule",
        config=dataclasses.asdict(config),
        steer=steer,
        alpha=alpha,
        steering=steering,
        max_tokens=max_tokens,
        model_calls={
            str(seed): model_calls(build_episode(config, seed), tested)
            for seed in range(first_seed, first_seed + seeds)
        },
        prompt_chars={str(seed): sum(calls) for seed, calls in reads.items()},
        longest_prompt_chars=max((max(calls, default=0) for calls in reads.values()), default=0),
        expected_reply_tokens=expected_reply_tokens(role, max_tokens),
    )
    seat = Seat(role, tested, preset, alpha if steer is not None else None)
    if role == "listener":
        return Task(
            version=BEHAVIOUR.version,
            dataset=MemoryDataset(samples, name=f"s2b-{preset}"),
            solver=play_episode(config, listener, max_tokens, steer, alpha),
            scorer=zsct_scorer(),
            config=GenerateConfig(temperature=LISTENER_TEMPERATURE, top_p=1.0),
            metadata=plain(settings),
            display_name=seat.display_name,
            tags=seat.tags,
        )
    return Task(
        version=BEHAVIOUR.version,
        dataset=MemoryDataset(samples, name=f"s2b-speaker-{preset}"),
        solver=play_speaker_episode(config, speaker, max_tokens),
        scorer=constructivity_scorer(),
        config=GenerateConfig(temperature=LISTENER_TEMPERATURE, top_p=1.0),
        metadata=plain(SpeakerRunMetadata(**settings, role=role, speaker=speaker)),
        display_name=seat.display_name,
        tags=seat.tags,
    )


@dataclasses.dataclass(frozen=True)
class Seat:
    """Which seat a run tests, and who sits in it: what tells a study's S2B-LM logs apart
    in Inspect. Every one is task ``s2b_lm`` (the name the readers and ``eval_set``'s resume
    find them by), so the role shows in the task's display name (Inspect's progress display,
    the log's ``task_display_name``) and in its tags (the Tags column of ``inspect view``'s
    log list): ``listener``/``speaker``, the player (``lm`` or a reference player's name),
    ``reference`` for a player that is not a model, the preset and the steering strength."""

    role: str
    player: str
    preset: str
    alpha: float | None = None
    """The steering strength of a steered run; None when the run is not steered."""

    @property
    def reference(self) -> bool:
        return self.player != "lm"

    @property
    def display_name(self) -> str:
        who = f"{self.player} (reference)" if self.reference else "lm"
        steering = "" if self.alpha is None else f", steered alpha={self.alpha:g}"
        return f"{TASK} {self.role}: {who}, {self.preset}{steering}"

    @property
    def tags(self) -> list[str]:
        tags = [self.role, f"{self.role}={self.player}", self.preset]
        if self.reference:
            tags.append("reference")
        if self.alpha is not None:
            tags.append(f"alpha={self.alpha:g}")
        return tags


EPISODE_CACHE_EXPIRY = "1W"
"""How long a finished model call of an episode is kept for a rerun to replay."""


def episode_cache(model: str, steer: str | None = None, alpha: float = 0.0) -> CachePolicy | bool:
    """Inspect's cache for the model calls of an episode with a served ``model``, so that an
    interrupted episode (one sample of a dozen calls) replays the calls the server finished
    instead of asking again. Models in this process (gapscope's engine, ``scripted/``, ``hf/``)
    are not cached: their name does not pin what answers (a test's script, a local checkpoint).

    The key is Inspect's: model, base URL, every message, the generate config and the epoch,
    so only the same request replays; decisions are greedy (temperature 0), so a replayed
    reply is what the server would send again. Not under steering: the key cannot see the
    forward hook, and a steered call must not replay an unsteered one (or another alpha's).
    """
    if not is_served(model) or (steer is not None and alpha != 0):
        return False
    return CachePolicy(expiry=EPISODE_CACHE_EXPIRY, scopes={"gapscope": "s2b-episode"})


def _check_seats(role: str, listener: str, speaker: str) -> None:
    """Each role tests one seat; a choice for the other seat is a mistake, said by name."""
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
    if listener not in LISTENERS:
        raise ValueError(f"listener must be one of {', '.join(LISTENERS)}, got {listener!r}")
    if speaker not in SPEAKERS:
        raise ValueError(f"speaker must be one of {', '.join(SPEAKERS)}, got {speaker!r}")
    if role == "listener" and speaker != "lm":
        raise ValueError(
            f"speaker={speaker!r} applies to role=speaker; the listener role's speaker is "
            "always the posdis speaker"
        )
    if role == "speaker" and listener not in ("lm", "rule"):
        raise ValueError(
            f"listener={listener!r} applies to role=listener; the speaker role's listener is "
            "always the rule listener"
        )


LISTENER_REPLY_TOKENS = 72
"""The listener reply length a plan expects below a higher cap: SmolLM2-135M-Instruct's
replies averaged 69 and 72 tokens (cap 160) in two quick profiles on ``transformers serve``."""


def expected_reply_tokens(role: str, max_tokens: int) -> int:
    """What a plan's time estimate assumes one reply costs: a listener's decision ends well
    before its cap (:data:`LISTENER_REPLY_TOKENS`); a speaker's message runs to it (SmolLM2
    wrote all 20 of a quick profile's messages to the 32-token cap: nothing in a game's
    prompt tells a speaker where to stop)."""
    return max_tokens if role == "speaker" else min(max_tokens, LISTENER_REPLY_TOKENS)


def model_calls(episode: Episode, tested: str) -> int:
    """How many of the episode's games the task's model answers: every game but the
    verbalizer-written exemplars when the tested seat (listener, or speaker in the speaker
    role) is ``lm``; none for a reference listener or speaker."""
    if tested != "lm":
        return 0
    return sum(1 for game in episode.games if game.index not in episode.exemplar_indices)


SPEAKER_REPLY_CHARS_PER_TOKEN = 4
"""Characters a speaker's reply is taken to add to the transcript per expected token."""


def prompt_chars(episode: Episode, tested: str, role: str, max_tokens: int) -> int:
    """About how many characters the task's model reads over the episode (the sum of
    :func:`call_prompt_chars`)."""
    return sum(call_prompt_chars(episode, tested, role, max_tokens))


def call_prompt_chars(episode: Episode, tested: str, role: str, max_tokens: int) -> list[int]:
    """About how many characters each of the task model's calls reads: each of its calls
    reads the whole transcript so far, so this grows with the square of the games (a plan
    turns it into prefill time). The replies the model has not written yet are stood in for:
    a listener's by the verbalizer's traces; a speaker's by a reply of its expected length
    (:func:`expected_reply_tokens`: it writes to its cap, longer than the bare message), and
    each of its games carries the sync round of the game before, with the message read as the
    reference's. It is a size, not a count. A quick profile of SmolLM2 (``transformers
    serve``) read 18,937 prompt tokens as listener against 22,957 estimated, and 20,165 as
    speaker against 13,979 (7,599 before the sync rounds and reply lengths were counted): its
    tokenizer reads this text at 3.1-3.2 characters a token, not 4. The last call reads the
    most: what a plan compares with a model's context window."""
    if tested != "lm":
        return []
    listener = role == "listener"
    read = len(system_prompt() if listener else speaker_system_prompt())
    reply_chars = SPEAKER_REPLY_CHARS_PER_TOKEN * expected_reply_tokens(role, max_tokens)
    tracker, calls = Tracker(episode), []
    heard: Heard | None = None
    for game in episode.games:
        turn = user_turn(episode, game) if listener else speaker_user_turn(episode, game, heard)
        read += len(turn)
        own = game.index not in episode.exemplar_indices
        if own:
            calls.append(read)
        if listener:
            read += len(tracker.decide(game).trace)
        else:
            line = message_line(game.message)
            read += max(len(line), reply_chars) if own else len(line)
            reading = read_message(line, episode.config.n_dim, episode.config.vocab_size)
            heard = Heard(game, reading.flexible, game.same)
        tracker.sync(game)
    return calls


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
                with steered(steer, alpha):
                    model = get_model()
                    cache = episode_cache(str(model), steer, alpha)
                    capped = within_run_cap(generate_config)  # profile --max-tokens
                    output = await model.generate(messages, config=capped, cache=cache)
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
        return _played(state, messages, records)

    return solve


def _played(
    state: TaskState, messages: list[ChatMessage], records: list[dict[str, Any]]
) -> TaskState:
    """The finished episode: its conversation, and every game's record for the scorer."""
    state.messages = messages
    state.store.set("games", records)
    state.output.completion = f"{len(records)} games played"
    return state


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
    return {
        **_zsct(query),
        "unparsed": float(sum(r["flexible"] is None for r in query)),
        "support_acc": accuracy_percent([r["flexible"] == r["same"] for r in support]),
    }


def _zsct(query: list[dict[str, Any]]) -> dict[str, float]:
    """ZSCT of the flexible and the strict decisions on the query games, and their adj."""
    zsct = accuracy_percent([r["flexible"] == r["same"] for r in query])
    strict = accuracy_percent([r["strict"] == r["same"] for r in query])
    return {
        "zsct": zsct,
        "adj_zsct": adj_zsct(zsct),
        "zsct_strict": strict,
        "adj_zsct_strict": adj_zsct(strict),
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


@solver
def play_speaker_episode(config: S2BConfig, speaker: str, max_tokens: int) -> Solver:
    """Play every game of the sample's episode with the chosen speaker and the rule listener.

    Two rule listeners follow the episode, one fed the flexible reading of every message and
    one the strict reading, so strict ZSCT is what a listener accepting only the requested
    format would score; the speaker's sync rounds report the flexible one. The last k
    supporting games of an ``lm`` speaker are speaker-verbalizer exemplars, written from what
    the listener has learned of the model's own messages; reference speakers write every game.
    """
    played = 0
    generate_config = GenerateConfig(max_tokens=max_tokens, stop_seqs=["\nGame ", "\nSync round"])

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        episode = build_episode(config, int(state.metadata["seed"]))
        state.metadata["episode"] = episode_header(episode)
        messages: list[ChatMessage] = [ChatMessageSystem(content=speaker_system_prompt())]
        flexible, strict = ConventionListener(episode), ConventionListener(episode)
        reference = None if speaker == "lm" else reference_speaker(speaker, episode)
        exemplars = episode.exemplar_indices if reference is None else frozenset()
        heard: Heard | None = None
        records = []
        for game in episode.games:
            messages.append(ChatMessageUser(content=speaker_user_turn(episode, game, heard)))
            stop_reason = None
            if game.index in exemplars:
                _, reply = exemplar(episode, flexible.binding(), game)
            elif reference is not None:
                reply = message_line(reference(game))
            else:
                model = get_model()
                cache = episode_cache(str(model))
                capped = within_run_cap(generate_config)  # profile --max-tokens
                output = await model.generate(messages, config=capped, cache=cache)
                reply, stop_reason = output.completion, output.stop_reason
            messages.append(ChatMessageAssistant(content=reply))
            read = read_message(reply, config.n_dim, config.vocab_size)
            decisions = (
                flexible.decide(game, read.flexible.message),
                strict.decide(game, read.strict.message),
            )
            records.append(
                _speaker_record(game, reply, read, decisions, game.index in exemplars, stop_reason)
            )
            flexible.sync(game, read.flexible.message)
            strict.sync(game, read.strict.message)
            heard = Heard(game, read.flexible, decisions[0])
            nonlocal played
            played += 1
            display_counter("S2B games played", str(played))
        return _played(state, messages, records)

    return solve


def _speaker_record(
    game: Game,
    reply: str,
    read: ReadMessage,
    decisions: tuple[bool | None, bool | None],
    written: bool,
    stop_reason: str | None,
) -> dict[str, Any]:
    """One speaker-role game: the target, the message under each reading and what made it
    malformed (if anything), the rule listener's decision on each, whether the speaker
    verbalizer ``written`` it (an exemplar), and the model's stop reason."""
    return {
        "index": game.index,
        "phase": game.phase,
        "same": game.same,
        "exemplar": written,
        "target": list(game.target),
        "reply": reply,
        "message": None if read.flexible.tokens is None else list(read.flexible.tokens),
        "problem": read.flexible.problem,
        "strict_problem": read.strict.problem,
        "flexible": decisions[0],
        "strict": decisions[1],
        "stop_reason": stop_reason,
    }


def score_speaker_games(records: list[dict[str, Any]]) -> dict[str, float]:
    """Constructivity ZSCT (flexible and strict readings) and their adjusted forms, the share
    of malformed messages, support accuracy and the language measures.

    A malformed message leaves the game undecided, which counts as wrong. Exemplar games are
    written by the speaker verbalizer, not the speaker, so they are left out of the support
    accuracy, the malformed share and the language measures; those are computed over every
    other well-formed message of the episode, supporting and query games alike (the whole
    language the speaker used).
    """
    query = [r for r in records if r["phase"] == "query"]
    own = [r for r in records if not r["exemplar"]]
    support = [r for r in own if r["phase"] == "support"]
    formed = [r for r in own if r["problem"] is None]
    meanings = [tuple(r["target"]) for r in formed]
    said = [tuple(r["message"]) for r in formed]
    return {
        **_zsct(query),
        "malformed": accuracy_percent([r["problem"] is not None for r in own]),
        "support_acc": accuracy_percent([r["flexible"] == r["same"] for r in support]),
        "topsim": topsim(meanings, said),
        "posdis": posdis(meanings, said),
        "bosdis": bosdis(meanings, said),
    }


_SPEAKER_METRICS = {
    "zsct": [mean(), std(), adjusted_mean()],
    "zsct_strict": [mean(), std(), adjusted_mean()],
    "malformed": [mean(), std()],
    "support_acc": [mean(), std()],
    "topsim": [mean(), std()],
    "posdis": [mean(), std()],
    "bosdis": [mean(), std()],
}


@scorer(metrics=_SPEAKER_METRICS)
def constructivity_scorer() -> Scorer:
    """Per-episode constructivity: the rule listener's ZSCT on the speaker's query messages,
    with the malformed share and the emergent-language measures of the messages."""

    async def score(state: TaskState, target: Target) -> Score:
        records: list[dict[str, Any]] = state.store.get("games", [])
        values = score_speaker_games(records)
        beyond = beyond_context(records)
        return Score(
            value=values,  # type: ignore[arg-type]
            explanation=(
                f"constructivity ZSCT {values['zsct']:.1f} (strict {values['zsct_strict']:.1f})"
                f" over {sum(r['phase'] == 'query' for r in records)} query games; "
                f"{values['malformed']:.1f}% malformed messages; topsim {values['topsim']:.3f}"
                f", posdis {values['posdis']:.3f}, bosdis {values['bosdis']:.3f}"
                + (f"; {len(beyond)} games beyond the model's context" if beyond else "")
            ),
        )

    return score


BEHAVIOUR = Behaviour(
    version=1,
    prompts=s2b_templates.paths(),
    code=(
        prompting,
        answers,
        play_episode,
        play_speaker_episode,
        _played,
        _record,
        _speaker_record,
        zsct_scorer,
        constructivity_scorer,
        score_games,
        _zsct,
        score_speaker_games,
        query_answers,
    ),
)
"""What this task's version covers (:mod:`gapscope.task_version`): bump ``version`` when the
fingerprint test says its prompts, their rendering, the players or the scorers changed."""
