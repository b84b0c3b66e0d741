"""Episode export for audit: a JSONL file, one header record then one record per game.

Schema (documented in docs/s2b.md):
- header: ``{"record": "episode", "seed", "domain", "structure", "permutation",
  "stimuli", "config"}`` where ``permutation`` maps each speaker token (as a string key,
  JSON objects have string keys) to the token the listener receives;
- game: ``{"record": "game", "index", "phase", "target", "listener", "same", "message",
  "listener_view", "target_view"}`` with ``target``/``listener`` as latent value indices per
  dimension and ``message`` as the tokens the listener sees.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from gapscope.s2b.episode import Episode, Game


def episode_header(episode: Episode) -> dict[str, Any]:
    """The episode-level facts an auditor needs to re-check every game."""
    return {
        "record": "episode",
        "seed": episode.seed,
        "domain": episode.domain.name,
        "structure": list(episode.structure),
        "permutation": {str(t + 1): p for t, p in enumerate(episode.permutation)},
        "stimuli": episode.domain.describe(),
        "config": dataclasses.asdict(episode.config),
    }


def game_record(game: Game) -> dict[str, Any]:
    """One game as plain JSON values."""
    return {
        "record": "game",
        "index": game.index,
        "phase": game.phase,
        "target": list(game.target),
        "listener": list(game.listener),
        "same": game.same,
        "message": list(game.message),
        "listener_view": list(game.listener_view),
        "target_view": list(game.target_view),
    }


def write_jsonl(episode: Episode, out: Path) -> int:
    """Write the episode to ``out``; returns the number of game records."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as fh:
        fh.write(json.dumps(episode_header(episode)) + "\n")
        for game in episode.games:
            fh.write(json.dumps(game_record(game)) + "\n")
    return len(episode.games)
