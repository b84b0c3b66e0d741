"""Is a weight format faithful to fp32? Greedy continuations compared token by token.

A format that changes the answers changes the diagnostics' numbers, so a default format must
reproduce fp32's greedy output on the prompts the diagnostics actually send (the calibration
set: S2B-LM listener turns and OracleLadder probes, captured from the tasks by the slow test
and by ``benchmarks/task_prompts.py``; this floor never imports a diagnostic itself). A
continuation counts as equal when its first ``FAITHFUL_TOKENS`` tokens are fp32's; a format
is faithful when at least ``FAITHFUL_SHARE`` of the continuations are.

``MEASURED`` holds what the calibration set gave for the embedded SmolLM2 (64 greedy tokens a
prompt, batches of 8, fp32 engine as the reference); the provider records the line of the
format in use in every reply's metadata, so a log says how far its model's format is from fp32.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

FAITHFUL_TOKENS = 32
"""Leading greedy tokens a continuation must share with fp32's to count as equal."""
FAITHFUL_SHARE = 0.95
"""Share of equal continuations a default format needs."""


@dataclass(frozen=True)
class Agreement:
    """``equal`` of ``total`` continuations matched fp32's for ``tokens`` tokens."""

    equal: int
    total: int
    tokens: int = FAITHFUL_TOKENS

    @property
    def share(self) -> float:
        return self.equal / self.total if self.total else 0.0

    @property
    def faithful(self) -> bool:
        return self.total > 0 and self.share >= FAITHFUL_SHARE

    def line(self) -> str:
        verdict = "faithful" if self.faithful else "NOT faithful"
        return (
            f"{self.equal}/{self.total} greedy continuations equal to fp32's for "
            f">= {self.tokens} tokens ({100 * self.share:.0f} %, {verdict})"
        )


def shared_prefix(reference: Sequence[int], candidate: Sequence[int]) -> int:
    """How many leading tokens two continuations share."""
    for index, (a, b) in enumerate(zip(reference, candidate, strict=False)):
        if a != b:
            return index
    return min(len(reference), len(candidate))


def agreement(
    reference: Sequence[Sequence[int]],
    candidate: Sequence[Sequence[int]],
    tokens: int = FAITHFUL_TOKENS,
) -> Agreement:
    """How many of ``candidate``'s continuations equal ``reference``'s (the same prompts, in
    order) for their first ``tokens`` tokens. A reference shorter than ``tokens`` (it ended)
    must be matched whole."""
    if len(reference) != len(candidate):
        raise ValueError(
            f"agreement needs one candidate continuation per reference one, "
            f"got {len(candidate)} for {len(reference)}"
        )
    equal = sum(
        shared_prefix(ref, cand) >= min(tokens, len(ref))
        for ref, cand in zip(reference, candidate, strict=True)
    )
    return Agreement(equal, len(reference), tokens)


MEASURED: dict[str, Agreement] = {
    "gguf": Agreement(28, 28),
    "float32": Agreement(28, 28),
    "bf16 weights (fp32 activations)": Agreement(24, 28),
    "int8 weights (fp32 activations)": Agreement(16, 28),
    "int8": Agreement(6, 21),
}
"""SmolLM2-135M-Instruct on the calibration set (one thread; ``float32`` is a second fp32
engine against the first: the engine is deterministic). ``gguf`` (2026-12-06: all 28 equal
for all 64 tokens, on Gemma 3 270M too) is the default where a checkpoint carries GGUF codes,
fp32 elsewhere; the
two weight-only formats were measured and are not offered. int8 is the opt-in ``dtype=int8``
/ ``fastest`` format (measured on the 21 prompts of an earlier, smaller capture)."""


def format_note(weight_format: str) -> str:
    """What a log records about ``weight_format``: its measured agreement with fp32."""
    measured = MEASURED.get(weight_format)
    if measured is None:
        return f"{weight_format}: agreement with fp32 not measured"
    role = "a default on the CPU" if measured.faithful else "explicit opt-in"
    return f"{weight_format} ({role}): SmolLM2-135M {measured.line()}"
