"""Before the first sample: each served model answers a few short requests, and the plan says
how long the run may take at the speeds they measured.

A server that is down, a wrong served-model name or a refused key then ends the command with
one line per model quoting the server (exit 2, nothing started), instead of every sample
failing one by one. The requests are timed, in ``models.endpoint.PROBES`` rounds: each round's
speeds turn the plan's token budget into a wall time, the rounds' spread is the range the plan
shows, the preflight's own time is counted in it, and a warning past :data:`WALL_WARNING_S` for
any model says what would make the run smaller.
Models that run in this process (``gapscope/…``, ``scripted/…``, ``hf/…``) are not probed:
gapscope's own engine on a CPU is estimated at :data:`ASSUMED_CPU_TOKENS_PER_S`, the rest get
no estimate (the plan says so).
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gapscope.app.options import ATTEMPT_SLACK, MIN_ATTEMPT_TIMEOUT_S
from gapscope.models import EndpointError, Preflight, Probe, is_served, probe

if TYPE_CHECKING:
    from inspect_ai.model import Model

    from gapscope.app.study import PlanRow

PREFLIGHT_TIMEOUT_S = 120
"""The most one preflight request may take unless ``--attempt-timeout`` is given (no retry): a
server that accepts connections but does not answer (or trickles) is reported within it, and
one that refuses connections at once. ``transformers serve`` on SmolLM2 took 30 s for its
first request (it loads the model then) and 25 to over 60 s for 32 tokens on this loaded
2-core machine; a server still loading a large model should be waited for (its ``/health``)."""
WALL_WARNING_S = 3600.0
"""A model whose estimated wall time passes this gets a warning before the run."""
ASSUMED_CPU_TOKENS_PER_S = 50.0
"""gapscope's own engine on a CPU (not probed): roughly what a ~100M-parameter model decodes."""


@dataclass(frozen=True)
class Rate:
    """What a model's requests are believed to cost, and where the numbers come from: a
    request takes ``call_s`` plus ``prompt_token_s`` per prompt token plus one output token
    per ``1 / tokens_per_s`` (decoding)."""

    tokens_per_s: float
    source: str
    call_s: float = 0.0
    prompt_token_s: float = 0.0
    probes: tuple[Rate, ...] = ()
    """Each preflight round's own rate (this one is their median by decoding speed): the
    plan's range is their estimates' spread. Empty for a rate that was not measured."""
    preflight_s: float = 0.0
    """The preflight's own wall time, part of every estimate made from this rate."""

    def seconds(self, calls: int, prompt_tokens: int, output_tokens: int) -> float:
        """What ``calls`` requests reading ``prompt_tokens`` and writing ``output_tokens`` in
        all take, one after another (as one local server answers them)."""
        decode = output_tokens / self.tokens_per_s if self.tokens_per_s > 0 else 0.0
        return calls * self.call_s + prompt_tokens * self.prompt_token_s + decode

    def to_dict(self) -> dict[str, Any]:
        return {
            "tokens_per_s": round(self.tokens_per_s, 2),
            "call_s": round(self.call_s, 2),
            "prompt_tokens_per_s": round(1 / self.prompt_token_s, 1)
            if self.prompt_token_s > 0
            else None,
            "source": self.source,
            "probes": len(self.probes),
            "preflight_seconds": round(self.preflight_s, 1),
        }


def check_endpoints(
    models: Mapping[str, str | Model], timeout: int = PREFLIGHT_TIMEOUT_S
) -> dict[str, Rate]:
    """Probe every served model of ``models`` (name -> opened model); their measured rates.

    Each request gets ``timeout`` seconds (``--attempt-timeout`` where given, so that flag,
    which the refusal of a slow server names, does give it longer). Raises EndpointError with
    one line per model that failed (all of them are tried).
    """
    served = {name: m for name, m in models.items() if is_served(name) and not isinstance(m, str)}
    if not served:
        return {}

    async def all_probes() -> list[Preflight | BaseException]:
        jobs = [probe(m, name, timeout) for name, m in served.items()]
        return await asyncio.gather(*jobs, return_exceptions=True)

    results = asyncio.run(all_probes())
    failures = [str(r) for r in results if isinstance(r, BaseException)]
    if failures:
        raise EndpointError("; ".join(failures))
    return {p.model: measured_rates(p) for p in results if isinstance(p, Preflight)}


def measured_rate(p: Probe) -> Rate:
    """The cost model of one round of the preflight's two timed requests."""
    reading = f"{1 / p.prompt_token_s:.0f} prompt tokens/s" if p.prompt_token_s else "no"
    source = (
        f"measured: {p.output_tokens} tokens in {p.seconds:.1f} s, {p.call_s:.1f} s per"
        f" request, {reading} reading {p.long_prompt_tokens} in {p.long_s:.1f} s"
    )
    return Rate(p.tokens_per_s, source, p.call_s, p.prompt_token_s)


def measured_rates(preflight: Preflight) -> Rate:
    """The cost model of every round of a model's preflight: the median round (by decoding
    speed), carrying every round (:attr:`Rate.probes`) and the preflight's own time."""
    spent = preflight.seconds  # each round's estimate counts the preflight too
    rounds = tuple(
        dataclasses.replace(measured_rate(p), preflight_s=spent) for p in preflight.probes
    )
    median = sorted(rounds, key=lambda r: r.tokens_per_s)[len(rounds) // 2]
    calls = _span([r.call_s for r in rounds], lambda v: f"{v:.1f}")
    source = (
        f"measured on {len(rounds)} probes of {preflight.probes[0].output_tokens} tokens:"
        f" {calls} s per request; the preflight took {preflight.seconds:.0f} s"
    )
    if not all(p.streamed for p in preflight.probes):
        source += (
            "; the server does not stream, so each request's fixed cost counts its decoding"
            " too (an overestimate)"
        )
    return dataclasses.replace(median, source=source, probes=rounds, preflight_s=preflight.seconds)


DEFAULT_CONNECTIONS = 10
"""Inspect's requests in flight per model when ``--max-connections`` is not given."""


def request_bounds(
    row: PlanRow, rate: Rate | None, given: Mapping[str, int], connections: int | None = None
) -> dict[str, int]:
    """The bounds on ``row``'s requests: none for a model in this process; for a served one
    the options ``given``, and an attempt timeout when none was given: ``ATTEMPT_SLACK``
    times the token cap at ``rate`` with every connection busy, at least
    ``MIN_ATTEMPT_TIMEOUT_S`` (see ``app.options``)."""
    if not is_served(row.model):
        return {}
    bounds = dict(given)
    if "attempt_timeout" not in bounds:
        needed = 0.0
        if rate is not None and rate.tokens_per_s > 0:
            busy = connections or DEFAULT_CONNECTIONS
            needed = ATTEMPT_SLACK * busy * row.max_tokens / rate.tokens_per_s
        bounds["attempt_timeout"] = max(MIN_ATTEMPT_TIMEOUT_S, math.ceil(needed))
    return bounds


def assumed_rate(model: str, has_gpu: bool) -> Rate | None:
    """The rate of a model that is not probed: gapscope's engine on a CPU, else unknown."""
    if model.startswith("gapscope/") and not has_gpu:
        return Rate(ASSUMED_CPU_TOKENS_PER_S, "assumed for gapscope's engine on a CPU")
    return None


@dataclass(frozen=True)
class Estimate:
    """A model's estimated wall time, the preflight's own time included: ``about`` with each
    reply at its task's expected length (``PlanRow.reply_tokens``), ``up_to`` with every reply
    at its cap, each at the median round's rate; ``about_range`` and ``up_to_range`` the same
    over every round (:attr:`Rate.probes`; both ends equal for a rate not measured)."""

    about: float
    up_to: float
    about_range: tuple[float, float]
    up_to_range: tuple[float, float]
    probes: int


def estimated_seconds(rows: Iterable[PlanRow], rates: Mapping[str, Rate]) -> dict[str, Estimate]:
    """Per model with a rate, the seconds its plan rows take at that rate: per row its
    generations' fixed cost, the reading of their prompts (``PlanRow.prompt_tokens``) and
    their replies, one request after another (as one local server answers them), plus the
    preflight's own time.

    Without the reading of prompts, an S2B-LM episode (each call re-reads the growing
    transcript) took 3.5x its estimate on ``transformers serve`` on a loaded CPU here; with
    64-token replies everywhere, a whole quick profile took 1.8x its estimate (its OracleLadder
    rollouts averaged 180 tokens), hence each task's own expected length.
    """
    rows = list(rows)
    estimates = {}
    for model, rate in rates.items():
        own = [row for row in rows if row.model == model and row.generations]
        if not own or rate.tokens_per_s <= 0:
            continue
        about, up_to = _seconds(own, rate)
        spread = [_seconds(own, r) for r in rate.probes if r.tokens_per_s > 0] or [(about, up_to)]
        estimates[model] = Estimate(
            round(about, 1),
            round(up_to, 1),
            (round(min(a for a, _ in spread), 1), round(max(a for a, _ in spread), 1)),
            (round(min(u for _, u in spread), 1), round(max(u for _, u in spread), 1)),
            len(rate.probes),
        )
    return estimates


def _seconds(rows: Sequence[PlanRow], rate: Rate) -> tuple[float, float]:
    """``rows`` at ``rate`` with the preflight's time: replies at their expected length, and
    every reply at its cap."""
    fixed = rate.preflight_s + sum(rate.seconds(r.generations, r.prompt_tokens, 0) for r in rows)
    typical = sum(r.generations * r.reply_tokens for r in rows)
    capped = sum(r.token_budget for r in rows)
    return fixed + rate.seconds(0, 0, typical), fixed + rate.seconds(0, 0, capped)


RUN_ADVICE = "lower --max-tokens, -k / -n or --limit"
"""What makes a ``gapscope run`` smaller (its warning's advice)."""


def profile_advice(budget: str, limit: int | None, max_tokens: int | None) -> str:
    """What makes a ``gapscope profile`` smaller, given what it was already told: the quick
    budget only from the paper's (``demo`` is smaller still), then ``--limit`` and
    ``--max-tokens`` (lower than given, when given; not at all when already 1)."""
    caps = [
        f"{flag} {'lower than ' + str(given) if given else 'N'} ({unit})"
        for flag, given, unit in (
            ("--limit", limit, "samples per task"),
            ("--max-tokens", max_tokens, "per reply"),
        )
        if given != 1
    ]
    capping = f"cap it with {' and '.join(caps)}" if caps else "profile fewer diagnostics"
    if budget == "paper":
        return f"lower the budget (`--budget quick`), or {capping}"
    return capping


def estimate_lines(
    rows: Iterable[PlanRow], rates: Mapping[str, Rate], advice: str = RUN_ADVICE
) -> list[str]:
    """One line per model that generates: its estimated wall time, or why there is none;
    then a warning for each model whose time with every reply at its cap passes
    :data:`WALL_WARNING_S`, with ``advice`` for a first look."""
    rows = list(rows)
    seconds = estimated_seconds(rows, rates)
    lines, warnings = [], []
    for model in dict.fromkeys(row.model for row in rows if row.generations):
        if model not in seconds:
            lines.append(f"time: {model}: no estimate (a model in this process is not probed)")
            continue
        rate, estimate = rates[model], seconds[model]
        if estimate.probes:
            speeds = _span([r.tokens_per_s for r in rate.probes], lambda v: f"{v:.1f}")
            measured = f" (from {estimate.probes} probes)"
        else:
            speeds, measured = f"{rate.tokens_per_s:.1f}", ""
        up_to = _span(estimate.up_to_range, _duration)
        lines.append(
            f"time: {model}: about {_span(estimate.about_range, _duration)}{measured}, up to"
            f" {up_to} with every reply at its cap, at {speeds} tokens/s ({rate.source})"
        )
        if estimate.up_to > WALL_WARNING_S:
            warnings.append(f"warning: {model} may take up to {up_to}. For a first look {advice}.")
    return lines + warnings


def plan_time(
    rows: Iterable[PlanRow], rates: Mapping[str, Rate], advice: str = RUN_ADVICE
) -> dict[str, Any]:
    """The plan's ``time`` entry: per model its rate and estimated seconds (``seconds``:
    about; ``up_to_seconds``: every reply at its cap; ``*_range``: over the preflight's
    rounds), and the lines the plan prints (``analysis.terminal.print_plan``)."""
    rows = list(rows)
    seconds = estimated_seconds(rows, rates)

    def entry(model: str, rate: Rate) -> dict[str, Any]:
        estimate = seconds.get(model)
        if estimate is None:
            return rate.to_dict() | {"seconds": None, "up_to_seconds": None}
        return rate.to_dict() | {
            "seconds": estimate.about,
            "up_to_seconds": estimate.up_to,
            "seconds_range": list(estimate.about_range),
            "up_to_seconds_range": list(estimate.up_to_range),
        }

    return {
        "models": {m: entry(m, rate) for m, rate in rates.items()},
        "lines": estimate_lines(rows, rates, advice),
    }


def _span(values: Sequence[float], say: Callable[[float], str]) -> str:
    """``values`` as ``low-high`` in ``say``'s words (``84-110 min``, ``50 min-2.1 h``), or
    one value where both ends read the same."""
    low, high = say(min(values)), say(max(values))
    if low == high:
        return low
    low_number, _, low_unit = low.partition(" ")
    high_number, _, high_unit = high.partition(" ")
    if low_unit == high_unit:
        return f"{low_number}-{high_number}{' ' + low_unit if low_unit else ''}"
    return f"{low}-{high}"


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
