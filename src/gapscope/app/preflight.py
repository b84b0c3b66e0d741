"""Before the first sample: each served model answers one short request, and the plan says
how long the run may take at the speed that request measured.

A server that is down, a wrong served-model name or a refused key then ends the command with
one line per model quoting the server (exit 2, nothing started), instead of every sample
failing one by one. The same request is timed: its output tokens per second turn the plan's
token budget into a wall time, with a warning past :data:`WALL_WARNING_S` for any model.
Models that run in this process (``gapscope/…``, ``scripted/…``, ``hf/…``) are not probed:
gapscope's own engine on a CPU is estimated at :data:`ASSUMED_CPU_TOKENS_PER_S`, the rest get
no estimate (the plan says so).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gapscope.app.options import ATTEMPT_SLACK, MIN_ATTEMPT_TIMEOUT_S
from gapscope.models import EndpointError, Probe, is_served, probe

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

    async def all_probes() -> list[Probe | BaseException]:
        jobs = [probe(m, name, timeout) for name, m in served.items()]
        return await asyncio.gather(*jobs, return_exceptions=True)

    results = asyncio.run(all_probes())
    failures = [str(r) for r in results if isinstance(r, BaseException)]
    if failures:
        raise EndpointError("; ".join(failures))
    return {p.model: measured_rate(p) for p in results if isinstance(p, Probe)}


def measured_rate(p: Probe) -> Rate:
    """The cost model of the preflight's two timed requests."""
    reading = f"{1 / p.prompt_token_s:.0f} prompt tokens/s" if p.prompt_token_s else "no"
    source = (
        f"measured: {p.output_tokens} tokens in {p.seconds:.1f} s, {p.call_s:.1f} s per"
        f" request, {reading} reading {p.long_prompt_tokens} in {p.long_s:.1f} s"
    )
    return Rate(p.tokens_per_s, source, p.call_s, p.prompt_token_s)


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
    """A model's estimated wall time: ``about`` with each reply at its task's expected length
    (``PlanRow.reply_tokens``), ``up_to`` with every reply at its cap."""

    about: float
    up_to: float


def estimated_seconds(rows: Iterable[PlanRow], rates: Mapping[str, Rate]) -> dict[str, Estimate]:
    """Per model with a rate, the seconds its plan rows take at that rate: per row its
    generations' fixed cost, the reading of their prompts (``PlanRow.prompt_tokens``) and
    their replies, one request after another (as one local server answers them).

    Without the reading of prompts, an S2B-LM episode (each call re-reads the growing
    transcript) took 3.5x its estimate on ``transformers serve`` on a loaded CPU here; with
    64-token replies everywhere, a whole quick profile took 1.8x its estimate (its OracleLadder
    rollouts averaged 180 tokens), hence each task's own expected length.
    """
    about: dict[str, float] = {}
    up_to: dict[str, float] = {}
    for row in rows:
        rate = rates.get(row.model)
        if not row.generations or rate is None or rate.tokens_per_s <= 0:
            continue
        typical = row.generations * row.reply_tokens
        fixed = rate.seconds(row.generations, row.prompt_tokens, 0)
        about[row.model] = about.get(row.model, 0.0) + fixed + rate.seconds(0, 0, typical)
        capped = rate.seconds(0, 0, row.token_budget)
        up_to[row.model] = up_to.get(row.model, 0.0) + fixed + capped
    return {m: Estimate(round(about[m], 1), round(up_to[m], 1)) for m in about}


def estimate_lines(rows: Iterable[PlanRow], rates: Mapping[str, Rate]) -> list[str]:
    """One line per model that generates: its estimated wall time, or why there is none;
    then a warning for each model whose time with every reply at its cap passes
    :data:`WALL_WARNING_S`."""
    rows = list(rows)
    seconds = estimated_seconds(rows, rates)
    lines, warnings = [], []
    for model in dict.fromkeys(row.model for row in rows if row.generations):
        if model not in seconds:
            lines.append(f"time: {model}: no estimate (a model in this process is not probed)")
            continue
        rate, estimate = rates[model], seconds[model]
        lines.append(
            f"time: {model}: about {_duration(estimate.about)}, up to"
            f" {_duration(estimate.up_to)} with every reply at its cap, at"
            f" {rate.tokens_per_s:.1f} tokens/s ({rate.source})"
        )
        if estimate.up_to > WALL_WARNING_S:
            warnings.append(
                f"warning: {model} may take up to {_duration(estimate.up_to)}. For a first look"
                " lower the budget (`gapscope profile --budget quick`; for a run --max-tokens,"
                " -k/-n, --limit)."
            )
    return lines + warnings


def plan_time(rows: Iterable[PlanRow], rates: Mapping[str, Rate]) -> dict[str, Any]:
    """The plan's ``time`` entry: per model its rate and estimated seconds (``seconds``:
    about; ``up_to_seconds``: every reply at its cap), and the lines the plan prints
    (``analysis.terminal.print_plan``)."""
    rows = list(rows)
    seconds = estimated_seconds(rows, rates)

    def entry(model: str, rate: Rate) -> dict[str, Any]:
        estimate = seconds.get(model)
        about, up_to = (estimate.about, estimate.up_to) if estimate else (None, None)
        return rate.to_dict() | {"seconds": about, "up_to_seconds": up_to}

    return {
        "models": {m: entry(m, rate) for m, rate in rates.items()},
        "lines": estimate_lines(rows, rates),
    }


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
