"""The numbers docs/s2b.md states about episodes, measured with the project's own code (issue
30, finding 6: the docs said 16-64 supporting games, typically ~25). The reference speakers'
per-seed bosdis is held to the docs in ``test_speaker.py``, beside the run that measures it."""

from __future__ import annotations

import statistics
from pathlib import Path

from gapscope.s2b.config import S2BConfig
from gapscope.s2b.episode import build_episode

DOC = (Path(__file__).resolve().parents[2] / "docs" / "s2b.md").read_text(encoding="utf-8")
DASH = "\N{EN DASH}"


def test_supporting_games_per_episode_are_what_the_docs_say() -> None:
    counts = [len(build_episode(S2BConfig(), seed).support_games) for seed in range(1000)]
    low, high, mean = min(counts), max(counts), statistics.fmean(counts)
    assert (low, high, round(mean, 1)) == (14, 28, 21.1)
    stated = (
        f"an episode has {low}{DASH}{high} supporting games (mean {mean:.1f} over seeds 0{DASH}999"
    )
    assert stated in DOC
