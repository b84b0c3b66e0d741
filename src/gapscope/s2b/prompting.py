"""The listener's conversation: one user turn per game, appended, never rewritten.

The conversation only grows (the sync round of game g opens the user turn of game g+1), which
is what lets a model server reuse its KV cache across the games of an episode.
"""

from __future__ import annotations

from gapscope.s2b.episode import Episode, Game
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
