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
            hint = HINTS.get(cause.status_code) or (
                "the served-model name or a parameter" if cause.status_code == 400 else ""
            )
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
    return f"{model}: {type(exc).__name__}: {excerpt(str(exc))}"


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
    """The preflight's two timings: the plan's model of what one request to the endpoint costs,
    ``call_s + prompt_tokens x prompt_token_s + output_tokens x output_token_s``.

    ``first_s`` is when the short request's first token came (its fixed cost and a short
    prompt; all of ``seconds`` when the server does not stream), ``long_s`` the whole long
    request (a long prompt, one token)."""

    model: str
    seconds: float
    output_tokens: int
    first_s: float
    prompt_tokens: int
    long_s: float
    long_prompt_tokens: int

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


class EndpointError(Exception):
    """The preflight request failed; the message is :func:`describe_error`'s one line."""


async def probe(model: Model, name: str, timeout: int) -> Probe:
    """Time two requests to ``model`` (no retry, ``timeout`` seconds each): a short prompt
    answered in :data:`PROBE_TOKENS` tokens, streamed, and :data:`LONG_PROBE_PROMPT` answered
    in one. Raises EndpointError naming ``name`` and quoting the server when either fails.

    A server that loads its model on the first request (``transformers serve`` without a
    model on its command line: 30 s on a CPU here) makes the first one slow, and the plan's
    fixed cost per request high.
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
    first: list[float] = []

    async def on_stream(event: Any) -> None:
        if not first and getattr(event, "type", "") == "text":
            first.append(time.monotonic() - start)

    short = await _generate(model, name, PROBE_PROMPT, config, on_stream, timeout)
    seconds = time.monotonic() - start
    start = time.monotonic()
    one_token = config.model_copy(update={"max_tokens": 1})
    long = await _generate(model, name, LONG_PROBE_PROMPT, one_token, waited=timeout)
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
    )


async def _generate(
    model: Model,
    name: str,
    prompt: str,
    config: GenerateConfig,
    on_stream: Any = None,
    waited: int | None = None,
) -> ModelOutput:
    try:
        output = await model.generate(prompt, config=config, on_stream=on_stream)
    except Exception as exc:
        raise EndpointError(describe_error(name, exc, waited)) from None
    if output.error:
        raise EndpointError(f"{name}: {output.error}")
    return output


def _prompt_tokens(output: ModelOutput, prompt: str) -> int:
    """The prompt tokens the server counted, or about a quarter of the characters."""
    counted = output.usage.input_tokens if output.usage else 0
    return counted or len(prompt) // 4
