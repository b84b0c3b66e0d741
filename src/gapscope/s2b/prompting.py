"""The conversations of both roles: one user turn per game, appended, never rewritten.

The conversation only grows (the sync round of game g opens the user turn of game g+1), which
is what lets a model server reuse its KV cache across the games of an episode. The listener
reads its stimulus and the speaker's message; the speaker (``role=speaker``) reads its target,
the message length and the vocabulary, and its sync round says what the listener made of it.
"""

from __future__ import annotations

from dataclasses import dataclass

from gapscope.s2b.episode import Episode, Game
from gapscope.s2b.messages import Reading
from gapscope.s2b.templates import template


def system_prompt() -> str:
    """The game's rules; the code itself is never stated."""
    return template("system")


def _as_list(items: tuple[str, ...] | tuple[int, ...]) -> str:
    return "[" + ", ".join(str(i) for i in items) + "]"


def sync_text(game: Game) -> str:
    """The sync round after ``game``: the speaker's exact target, whatever was decided."""
    return template("sync").format(
        number=game.index + 1, target=_as_list(game.target_view), message=_as_list(game.message)
    )


def game_text(episode: Episode, game: Game) -> str:
    """The game as the listener sees it: its own stimulus and N rounds of the message."""
    n = episode.config.n_rounds
    rounds = "\n".join(
        template("round").format(round=r + 1, rounds=n, message=_as_list(game.message))
        for r in range(n)
    )
    return template("game").format(
        number=game.index + 1, stimulus=_as_list(game.listener_view), rounds=rounds
    )


def user_turn(episode: Episode, game: Game) -> str:
    """The user turn of ``game``: the previous game's sync round, then the game."""
    if game.index == 0:
        return game_text(episode, game)
    return sync_text(episode.games[game.index - 1]) + "\n\n" + game_text(episode, game)


def speaker_system_prompt() -> str:
    """The speaker role's rules: the message format and that the listener learns from sync
    rounds; no code is suggested."""
    return template("speaker_system")


def speaker_game_text(episode: Episode, game: Game) -> str:
    """The game as the speaker sees it: its target, the message length and the vocabulary."""
    return template("speaker_game").format(
        number=game.index + 1,
        target=_as_list(game.target_view),
        length=episode.config.n_dim,
        vocab=episode.config.vocab_size,
    )


@dataclass(frozen=True)
class Heard:
    """What the listener made of one game's speaker reply, for the next sync round."""

    game: Game
    reading: Reading
    decision: bool | None


def _problem_text(reading: Reading, length: int, vocab: int) -> str:
    tokens = reading.tokens or ()
    if reading.problem == "wrong_length":
        return f"it has {len(tokens)} tokens, not {length}"
    if reading.problem == "out_of_vocab":
        bad = next(t for t in tokens if not 1 <= t <= vocab)
        return f"token {bad} is not between 1 and {vocab}"
    return "no list of tokens was found in your reply"


def speaker_sync_text(episode: Episode, heard: Heard) -> str:
    """The speaker's sync round: its target, the message as the listener read it, and the
    listener's decision and whether it was right (or why the message could not be read)."""
    game, reading = heard.game, heard.reading
    length, vocab = episode.config.n_dim, episode.config.vocab_size
    if reading.message is None or heard.decision is None:
        return template("speaker_sync_unread").format(
            number=game.index + 1,
            problem=_problem_text(reading, length, vocab),
            length=length,
            vocab=vocab,
            target=_as_list(game.target_view),
        )
    return template("speaker_sync").format(
        number=game.index + 1,
        target=_as_list(game.target_view),
        message=_as_list(reading.message),
        decision="same" if heard.decision else "different",
        verdict="right" if heard.decision == game.same else "wrong",
    )


def speaker_user_turn(episode: Episode, game: Game, previous: Heard | None) -> str:
    """The speaker's user turn: the previous game's sync round, then the game."""
    text = speaker_game_text(episode, game)
    return text if previous is None else speaker_sync_text(episode, previous) + "\n\n" + text
