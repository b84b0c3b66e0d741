"""A model served over HTTP, reached with bounds: a capped reply, one line per failure, a probe.

Inspect's OpenAI-compatible providers hand whatever the server sends to the ``openai`` client.
Three shapes of a misbehaving server then end badly: a 200 MB reply is read whole into memory,
an error body under HTTP 200 becomes ``TypeError: 'NoneType' object is not iterable`` and a
completion without choices an ``IndexError``, neither naming what the server said.
``http_guard.GuardedTransport`` sits under the client (an ``httpx`` transport, passed to the
provider as its ``http_client``) and turns each into an HTTP 502 carrying the server's own
words, which Inspect retries within ``max_retries`` and then records as the sample's error.

:func:`describe_error` is the one line a user reads for any failure of a request, and
:func:`probe` is the preflight: one short generation before the first sample, which also
measures the endpoint's output tokens per second for the plan's time estimate.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gapscope.models.replies import GUARD, excerpt, server_words

if TYPE_CHECKING:
    from inspect_ai.model import Model

MAX_REPLY_BYTES = 32 * 1024 * 1024
"""The largest reply body accepted (a 16,384-token completion is well under 1 MB)."""

HTTP_PROVIDERS = ("openai-api", "openai")
"""Providers whose client takes the guarded transport (the ``openai`` SDK's ``http_client``)."""

LOCAL_PROVIDERS = ("gapscope", "scripted", "mockllm", "hf", "llama-cpp-python", "none")
"""Providers that run in this process: no endpoint to probe."""

PROBE_PROMPT = "Count from 1 to 40, separated by spaces."
PROBE_TOKENS = 32
"""The preflight's generations: long enough to time decoding, short enough to cost nothing."""


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
    401: "check the API key (LOCAL_API_KEY for openai-api/local/NAME)",
    403: "check the API key and what it may use",
    404: "check the served-model name (openai-api/SERVICE/NAME: NAME is what the server serves)"
    " and the base URL (SERVICE_BASE_URL, ending in /v1)",
}


def describe_error(model: str, exc: BaseException) -> str:
    """One line for a failed request: the model, what happened and the server's own words."""
    import openai

    for cause in _chain(exc):
        if isinstance(cause, openai.APIStatusError):
            words = server_words(cause.body) if cause.body is not None else cause.message
            if isinstance(cause.body, dict) and cause.body.get("type") == GUARD:
                return f"{model}: {words}"  # the reply was refused here, not by the server
            hint = HINTS.get(cause.status_code) or (
                "the served-model name or a parameter" if cause.status_code == 400 else ""
            )
            tail = f"; {hint}" if hint and cause.status_code < 500 else ""
            return (
                f"{model}: the server refused the request (HTTP {cause.status_code}): {words}{tail}"
            )
        if isinstance(cause, openai.APITimeoutError):
            return f"{model}: no reply from {cause.request.url} in time"
        if isinstance(cause, openai.APIConnectionError):
            reason = next((str(c) for c in _chain(cause) if c is not cause and str(c)), "")
            return f"{model}: cannot reach {cause.request.url}: {reason or cause.message}"
    for cause in _chain(exc):
        if type(cause).__name__ == "AttemptTimeoutError":
            return f"{model}: no reply within the attempt timeout ({cause}); see --attempt-timeout"
    return f"{model}: {type(exc).__name__}: {excerpt(str(exc))}"


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
    """One short generation's timing: the plan's estimate of the endpoint's speed."""

    model: str
    seconds: float
    output_tokens: int

    @property
    def tokens_per_s(self) -> float:
        return self.output_tokens / self.seconds if self.seconds > 0 else 0.0


class EndpointError(Exception):
    """The preflight request failed; the message is :func:`describe_error`'s one line."""


async def probe(model: Model, name: str, timeout: int) -> Probe:
    """Send the preflight generation to ``model`` twice (no retry, ``timeout`` seconds each).

    The first request may wait for the server to load its model (``transformers serve``
    loads on first use: 30 s on a CPU here), so the second one is timed. Raises EndpointError
    naming ``name`` and quoting the server when either fails.
    """
    from inspect_ai.model import GenerateConfig

    config = GenerateConfig(
        max_tokens=PROBE_TOKENS,
        temperature=0.0,
        max_retries=0,
        timeout=timeout,
        attempt_timeout=timeout,
    )
    for _ in range(2):
        start = time.monotonic()
        try:
            output = await model.generate(PROBE_PROMPT, config=config)
        except Exception as exc:
            raise EndpointError(describe_error(name, exc)) from None
        if output.error:
            raise EndpointError(f"{name}: {output.error}")
    seconds = time.monotonic() - start
    tokens = output.usage.output_tokens if output.usage else 0
    if not tokens:  # a server that reports no usage: count words, about one token each
        tokens = max(1, len(output.completion.split()))
    return Probe(name, seconds, tokens)
