"""A model served over HTTP, reached with bounds: a capped reply, one line per failure, a probe.

Inspect's OpenAI-compatible providers hand whatever the server sends to the ``openai`` client.
Three shapes of a misbehaving server then end badly: a 200 MB reply is read whole into memory,
an error body under HTTP 200 becomes ``TypeError: 'NoneType' object is not iterable`` and a
completion without choices an ``IndexError``, neither naming what the server said.
``http_guard.GuardedTransport`` sits under the client (an ``httpx`` transport, passed to the
provider as its ``http_client``): the last two become an HTTP 502 carrying the server's own
words, which Inspect retries within ``max_retries`` and then records as the sample's error;
a reply over the cap, and a whole reply to a streamed request, are refused for good (the same
request would get the same reply), without a retry.

:func:`describe_error` is the one line a user reads for any failure of a request,
:func:`describe_missing_settings` the one for a served model Inspect cannot open for want of
its environment variables, and :func:`probe` is the preflight: :data:`PROBES` rounds of two
timed requests before the first sample, which give the plan's time estimate and its range.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gapscope.models.replies import GUARD, excerpt, server_words

if TYPE_CHECKING:
    from inspect_ai.model import GenerateConfig, Model, ModelOutput

MAX_REPLY_BYTES = 32 * 1024 * 1024
"""The largest reply body accepted (a 16,384-token completion is well under 1 MB)."""

HTTP_PROVIDERS = ("openai-api", "openai")
"""Providers whose client takes the guarded transport (the ``openai`` SDK's ``http_client``)."""

LOCAL_PROVIDERS = ("gapscope", "scripted", "mockllm", "hf", "llama-cpp-python", "none")
"""Providers that run in this process: no endpoint to probe."""

PROBE_PROMPT = "Count from 1 to 40, separated by spaces."
PROBE_TOKENS = 32
"""The preflight's timed generation: long enough to time decoding, short enough to cost
nothing. It is streamed, so that its first token times the request's fixed cost."""
LONG_PROBE_PROMPT = "Reply with one word. " + "The grey cat sat on the warm mat. " * 100
"""The preflight's second request (one output token): about 900 prompt tokens, so that the
difference from the first times the server's reading of a prompt."""


def provider_of(model: str) -> str:
    return model.split("/", 1)[0]


def is_served(model: str) -> bool:
    """Whether ``model`` is reached over the network (so a preflight makes sense)."""
    return provider_of(model) not in LOCAL_PROVIDERS


def guarded_model_args(model: str, max_bytes: int | None = None) -> dict[str, Any]:
    """The ``get_model`` arguments that put the guarded transport under ``model``'s client.

    The ``openai`` SDK's own retries are turned off (``max_retries=0``): Inspect's retry loop,
    bounded by ``--max-retries`` and ``--timeout``, is then the only one, so a request the
    server fails is sent ``max_retries + 1`` times, not three times that.
    """
    if provider_of(model) not in HTTP_PROVIDERS:
        return {}
    from inspect_ai._util.http_defaults_httpx2 import default_client_kwargs
    from openai import DefaultAsyncHttpxClient

    from gapscope.models.http_guard import GuardedTransport

    kwargs = default_client_kwargs()  # Inspect's own client defaults (limits, keepalive)
    kwargs["transport"] = GuardedTransport(kwargs["transport"], max_bytes or MAX_REPLY_BYTES)
    return {"http_client": DefaultAsyncHttpxClient(**kwargs), "max_retries": 0}


HINTS = {
    400: "check what it names: a parameter the server does not take, or a reply cap"
    " (--max-tokens) over the served model's context length",
    401: "check the API key (LOCAL_API_KEY for openai-api/local/NAME)",
    403: "check the API key and what it may use",
    404: "check the served-model name (openai-api/SERVICE/NAME: NAME is what the server serves)"
    " and the base URL (SERVICE_BASE_URL, ending in /v1)",
}


def describe_error(model: str, exc: BaseException, waited: int | None = None) -> str:
    """One line for a failed request: the model, what happened and the server's own words;
    for a request that timed out after ``waited`` seconds, the flag that gives it longer."""
    import openai

    longer = (
        f"; a slow server (not a stalled one) needs longer: --attempt-timeout {4 * waited}"
        if waited
        else "; a slow server (not a stalled one) needs a longer --attempt-timeout"
    )

    for cause in _chain(exc):
        if isinstance(cause, openai.APIError) and _refused_here(cause.body):
            return f"{model}: {server_words(cause.body)}"  # by the guard, not the server
        if isinstance(cause, openai.APIStatusError):
            words = server_words(cause.body) if cause.body is not None else cause.message
            hint = HINTS.get(cause.status_code, "")
            tail = f"; {hint}" if hint and cause.status_code < 500 else ""
            return (
                f"{model}: the server refused the request (HTTP {cause.status_code}): {words}{tail}"
            )
        if isinstance(cause, openai.APITimeoutError):
            within = f" within {waited} s" if waited else " in time"
            return f"{model}: no reply from {cause.request.url}{within}{longer}"
        if isinstance(cause, openai.APIConnectionError):
            reason = next((str(c) for c in _chain(cause) if c is not cause and str(c)), "")
            return f"{model}: cannot reach {cause.request.url}: {reason or cause.message}"
    for cause in _chain(exc):
        if type(cause).__name__ == "AttemptTimeoutError":
            within = f"{waited} s" if waited else f"the attempt timeout ({cause})"
            return f"{model}: no reply within {within}{longer}"
        if type(cause).__name__ == "NoStreamDataError":  # Inspect's: a 200 stream, no event
            return (
                f"{model}: the server answered a streamed request with HTTP 200 and no event"
                " at all (an empty stream); check the server's log for what failed"
            )
    innermost = _chain(exc)[-1]  # not tenacity's RetryError around it
    return f"{model}: {type(innermost).__name__}: {excerpt(str(innermost))}"


SETTINGS = {
    "BASE_URL": "the server's address, ending in /v1, e.g. http://127.0.0.1:8000/v1",
    "API_KEY": "its key; any value for a server that takes none",
}
"""What each environment variable Inspect reads for a served model holds."""


def missing_settings(model: str) -> list[str]:
    """The environment variables Inspect needs to open ``model`` that are unset or empty:
    ``SERVICE_BASE_URL`` and ``SERVICE_API_KEY`` for ``openai-api/SERVICE/NAME`` (its
    ``openai_compatible`` provider reads them), ``OPENAI_API_KEY`` for ``openai/NAME``."""
    parts = model.split("/")
    if parts[0] == "openai-api" and len(parts) >= 3:
        service = parts[1].upper().replace("-", "_")
        wanted = [f"{service}_BASE_URL", f"{service}_API_KEY"]
    elif parts[0] == "openai":
        wanted = ["OPENAI_API_KEY"]
    else:
        return []
    return [name for name in wanted if not os.environ.get(name)]


def describe_missing_settings(model: str) -> str | None:
    """What to set for ``model``, in one line naming every variable and what it holds, or None
    when none is missing (Inspect names one per attempt, on two lines, without the fix)."""
    missing = missing_settings(model)
    if not missing:
        return None
    said = [
        f"{name} ({SETTINGS['BASE_URL' if name.endswith('_BASE_URL') else 'API_KEY']})"
        for name in missing
    ]
    return f"cannot open it: set {' and '.join(said)}"


def _refused_here(body: object) -> bool:
    """Whether an error body is the guarded transport's (``http_guard``) refusal."""
    return isinstance(body, dict) and (
        body.get("type") == GUARD or _refused_here(body.get("error"))
    )


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and what caused it, through tenacity's RetryError (Inspect's retry loop raises
    one when an attempt timed out past the last retry)."""
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen:
        seen.append(current)
        last = getattr(current, "last_attempt", None)  # tenacity.RetryError
        inner = last.exception() if last is not None and last.failed else None
        current = inner or current.__cause__ or current.__context__
    return seen


@dataclass(frozen=True)
class Probe:
    """One round of the preflight's two timings: the plan's model of what one request to the
    endpoint costs, ``call_s + prompt_tokens x prompt_token_s + output_tokens x
    output_token_s``.

    ``first_s`` is when the short request's first token came (its fixed cost and a short
    prompt; all of ``seconds`` when the server does not stream, ``streamed`` False), ``long_s``
    the whole long request (a long prompt, one token)."""

    model: str
    seconds: float
    output_tokens: int
    first_s: float
    prompt_tokens: int
    long_s: float
    long_prompt_tokens: int
    streamed: bool = True

    @property
    def output_token_s(self) -> float:
        """Seconds per output token: the short request after its first token."""
        if self.output_tokens > 1 and self.first_s < self.seconds:
            return (self.seconds - self.first_s) / (self.output_tokens - 1)
        return self.seconds / max(1, self.output_tokens)

    @property
    def prompt_token_s(self) -> float:
        """Seconds per prompt token: how much longer the long prompt took to answer."""
        extra = self.long_prompt_tokens - self.prompt_tokens
        return max(0.0, self.long_s - self.first_s) / extra if extra > 0 else 0.0

    @property
    def call_s(self) -> float:
        """The fixed cost of a request: the first token, less its prompt's reading."""
        return max(0.0, self.first_s - self.prompt_tokens * self.prompt_token_s)

    @property
    def tokens_per_s(self) -> float:
        return 1 / self.output_token_s if self.output_token_s > 0 else 0.0


PROBES = 3
"""Rounds of the preflight's two requests per served model. One round made the same quick
plan 84 min, 2.9 h, 3.6 h and 5.2 h within 20 minutes on a loaded machine; the plan shows the
rounds' spread as its range instead of one of them as the answer."""
PREFLIGHT_REQUESTS = 2 * PROBES
"""The requests the preflight sends a server that streams (one more to one that does not)."""


@dataclass(frozen=True)
class Preflight:
    """What the preflight measured of one served model: its rounds, and its own wall time
    (part of what the command takes, so part of the plan's estimate)."""

    model: str
    probes: tuple[Probe, ...]
    seconds: float


class EndpointError(Exception):
    """The preflight request failed; the message is :func:`describe_error`'s one line."""


async def probe(model: Model, name: str, timeout: int, rounds: int = PROBES) -> Preflight:
    """Time ``rounds`` rounds of two requests to ``model`` (no retry, ``timeout`` seconds
    each): a short prompt answered in :data:`PROBE_TOKENS` tokens, streamed, and
    :data:`LONG_PROBE_PROMPT` answered in one. Raises EndpointError naming ``name`` and
    quoting the server when any fails.

    A server that answers the streamed request with one whole reply (``http_guard``'s
    ``NotStreamed``) is timed unstreamed from then on: the runs themselves do not stream.
    A server that loads its model on the first request (``transformers serve`` without a
    model on its command line: 30 s on a CPU here) makes the first round slow, and the top of
    the plan's range high.
    """
    from inspect_ai.model import GenerateConfig

    config = GenerateConfig(
        max_tokens=PROBE_TOKENS,
        temperature=0.0,
        max_retries=0,
        timeout=timeout,
        attempt_timeout=timeout,
    )
    start = time.monotonic()
    streamed = True
    probes = []
    for _ in range(rounds):
        try:
            probes.append(await _round(model, name, config, streamed))
            continue
        except _Unstreamed:
            streamed = False
        # outside the handler: a failure of the unstreamed round is not chained to this one
        probes.append(await _round(model, name, config, streamed))
    return Preflight(name, tuple(probes), time.monotonic() - start)


class _Unstreamed(Exception):
    """The server answered the streamed request whole (see :func:`probe`)."""


async def _round(model: Model, name: str, config: GenerateConfig, streamed: bool) -> Probe:
    """One round of :func:`probe`: the short request (streamed when ``streamed``), then the
    long one."""
    start = time.monotonic()
    first: list[float] = []

    async def on_stream(event: Any) -> None:
        if not first and getattr(event, "type", "") == "text":
            first.append(time.monotonic() - start)

    short = await _generate(model, name, PROBE_PROMPT, config, on_stream if streamed else None)
    seconds = time.monotonic() - start
    start = time.monotonic()
    one_token = config.model_copy(update={"max_tokens": 1})
    long = await _generate(model, name, LONG_PROBE_PROMPT, one_token)
    long_s = time.monotonic() - start
    output_tokens = short.usage.output_tokens if short.usage else 0
    if not output_tokens:  # a server that reports no usage: count words, about one token each
        output_tokens = max(1, len(short.completion.split()))
    return Probe(
        name,
        seconds,
        output_tokens,
        first[0] if first else seconds,
        _prompt_tokens(short, PROBE_PROMPT),
        long_s,
        _prompt_tokens(long, LONG_PROBE_PROMPT),
        streamed,
    )


async def _generate(
    model: Model,
    name: str,
    prompt: str,
    config: GenerateConfig,
    on_stream: Any = None,
) -> ModelOutput:
    try:
        output = await model.generate(prompt, config=config, on_stream=on_stream)
    except Exception as exc:
        # http_guard.NotStreamed, by name: http_guard needs the openai extra, which a served
        # model of another provider does not
        if any(type(cause).__name__ == "NotStreamed" for cause in _chain(exc)):
            raise _Unstreamed from None
        raise EndpointError(describe_error(name, exc, config.timeout)) from None
    if output.error:
        raise EndpointError(f"{name}: {output.error}")
    return output


def _prompt_tokens(output: ModelOutput, prompt: str) -> int:
    """The prompt tokens the server counted, or about a quarter of the characters."""
    counted = output.usage.input_tokens if output.usage else 0
    return counted or len(prompt) // 4
