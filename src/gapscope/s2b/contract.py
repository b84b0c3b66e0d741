"""What the S2B-LM task writes into its log, declared once for the task and its reader
(:mod:`gapscope.analysis.s2b`): a renamed key is then a type error on both sides."""

from __future__ import annotations

from typing import Any, TypedDict

from gapscope.models import SteeringRecord

TASK = "s2b_lm"


class EpisodeMetadata(TypedDict):
    """One sample = one episode, named by its seed."""

    seed: int


class RunMetadata(TypedDict):
    """The log's task metadata: the preset, the listener, the resolved episode config and the
    steering applied (None when unsteered)."""

    preset: str
    listener: str
    config: dict[str, Any]
    steer: str | None
    alpha: float
    steering: SteeringRecord | None
    max_tokens: int
    model_calls: dict[str, int]
    """Per episode (seed), the games the task's model answers: a plan counts them before a run."""
    prompt_chars: dict[str, int]
    """Per episode (seed), about how many characters the model's calls read in all (each the
    transcript so far): a plan's estimate of the server's prompt reading."""
    longest_prompt_chars: int
    """About how many characters the longest of the model's calls reads (an episode's last
    game): what a plan compares with the model's context window."""
    expected_reply_tokens: int
    """What a plan expects one of the model's replies to cost (``task.expected_reply_tokens``):
    an assumption for the time estimate, not a measurement of this run."""


class SpeakerRunMetadata(RunMetadata):
    """A ``role=speaker`` run (constructivity): ``listener`` is always ``rule`` (the rule
    listener decodes the messages) and ``speaker`` names who wrote them (``lm`` = the model).
    Listener-role runs write :class:`RunMetadata` alone, as before the speaker role existed."""

    role: str
    speaker: str
