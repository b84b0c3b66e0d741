"""S2B-LM: meta-referential games that test compositional learning behaviour.

As listener (receptivity), a model must decode a speaker's freshly permuted positional code
from a few supporting games and generalise to held-out combinations (the zero-shot
compositional test, ZSCT). As speaker (constructivity, ``role="speaker"``), it must invent a
code that a rule-based listener learns from the sync rounds, and extend it to held-out
combinations; its messages are also scored with the emergent-language measures.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gapscope._face import lazy_face

if TYPE_CHECKING:
    from gapscope.s2b import contract
    from gapscope.s2b.config import ConfigError, S2BConfig, resolve
    from gapscope.s2b.contract import TASK, EpisodeMetadata, RunMetadata
    from gapscope.s2b.episode import build_episode
    from gapscope.s2b.export import write_jsonl
    from gapscope.s2b.metrics import (
        LANGUAGE_KEYS,
        SCORE_KEYS,
        SPEAKER_SCORE_KEYS,
        SeedSummary,
        adj_zsct,
        beyond_context,
    )
    from gapscope.s2b.prompting import system_prompt, user_turn
    from gapscope.s2b.speaker import SPEAKERS
    from gapscope.s2b.task import LISTENERS, MAX_SEEDS, ROLES, s2b_lm
    from gapscope.s2b.verbalizer import (
        CORRUPTIONS,
        DEFAULT_CORRUPTION,
        Corruption,
        Tracker,
        check_corruption,
    )

__all__ = [
    "CORRUPTIONS",
    "DEFAULT_CORRUPTION",
    "LANGUAGE_KEYS",
    "LISTENERS",
    "MAX_SEEDS",
    "ROLES",
    "SCORE_KEYS",
    "SPEAKERS",
    "SPEAKER_SCORE_KEYS",
    "TASK",
    "ConfigError",
    "Corruption",
    "EpisodeMetadata",
    "RunMetadata",
    "S2BConfig",
    "SeedSummary",
    "Tracker",
    "adj_zsct",
    "beyond_context",
    "build_episode",
    "check_corruption",
    "contract",
    "resolve",
    "s2b_lm",
    "system_prompt",
    "user_turn",
    "write_jsonl",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "contract": ".contract",
        "CORRUPTIONS": ".verbalizer",
        "ConfigError": ".config",
        "Corruption": ".verbalizer",
        "DEFAULT_CORRUPTION": ".verbalizer",
        "EpisodeMetadata": ".contract",
        "LANGUAGE_KEYS": ".metrics",
        "LISTENERS": ".task",
        "MAX_SEEDS": ".task",
        "ROLES": ".task",
        "RunMetadata": ".contract",
        "S2BConfig": ".config",
        "SCORE_KEYS": ".metrics",
        "SPEAKERS": ".speaker",
        "SPEAKER_SCORE_KEYS": ".metrics",
        "SeedSummary": ".metrics",
        "TASK": ".contract",
        "Tracker": ".verbalizer",
        "adj_zsct": ".metrics",
        "beyond_context": ".metrics",
        "build_episode": ".episode",
        "check_corruption": ".verbalizer",
        "resolve": ".config",
        "s2b_lm": ".task",
        "system_prompt": ".prompting",
        "user_turn": ".prompting",
        "write_jsonl": ".export",
    },
)
