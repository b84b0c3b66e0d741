"""The ``httpx`` transport under a served model's client: replies are capped and checked.

Imported only for the ``openai``-based providers (``httpx2`` comes with the ``openai`` extra);
see ``gapscope.models.endpoint`` for why it exists.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable

import httpx2
import openai

from gapscope.models.replies import GUARD, excerpt, server_words


class GuardedTransport(httpx2.AsyncBaseTransport):
    """An ``httpx`` transport that refuses oversized replies, completions without choices and
    whole replies to a request that asked for a stream.

    A completion without choices (or an error body under HTTP 200) becomes an HTTP 502 whose
    ``error.message`` quotes the server: the client raises its ordinary status error and
    Inspect retries it, as it would the server's own 502 (an overloaded server recovers).
    A reply over the cap is refused with :class:`ReplyTooLarge` and a whole reply to a
    streamed request with :class:`NotStreamed`: neither is retried, since the same server
    sends the same reply again (a 502 here was retried: 307 requests in 392 s in one
    profile). A streamed reply (``text/event-stream``) is passed on as it comes, counted,
    and fails with :class:`ReplyTooLarge` once it passes the cap.
    """

    def __init__(self, inner: httpx2.AsyncBaseTransport, max_bytes: int) -> None:
        self.inner = inner
        self.max_bytes = max_bytes

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self.inner.handle_async_request(request)
        if "text/event-stream" in response.headers.get("content-type", ""):
            return httpx2.Response(
                response.status_code,
                headers=response.headers,
                stream=_CappedStream(response, request, self.max_bytes, self._too_large),
                extensions=response.extensions,
                request=request,
            )
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_bytes:
            await response.aclose()
            raise ReplyTooLarge(self._too_large(f"declares {int(declared):,} bytes"), request)
        body = bytearray()
        async for chunk in response.stream:  # type: ignore[union-attr]
            body.extend(chunk)
            if len(body) > self.max_bytes:
                await response.aclose()
                raise ReplyTooLarge(self._too_large(f"passed {self.max_bytes:,} bytes"), request)
        await response.aclose()
        content = bytes(body)
        if response.status_code == 200 and request.url.path.endswith("/chat/completions"):
            problem = _no_choices(content, response.headers.get("content-encoding"))
            if problem:  # said first: what the server answered outweighs how it answered
                return _refusal(request, problem)
        if response.status_code == 200 and _asks_for_a_stream(request):
            kind = response.headers.get("content-type") or "no Content-Type"
            raise NotStreamed(
                f"the server answered a streamed request (stream: true) with one whole reply"
                f" ({kind}), not a stream of events: it does not stream",
                request,
            )
        return httpx2.Response(
            response.status_code,
            headers=response.headers,
            content=content,
            extensions=response.extensions,
            request=request,
        )

    def _too_large(self, what: str) -> str:
        return (
            f"the server's reply {what}, over gapscope's cap of {self.max_bytes:,} bytes "
            "(gapscope.models.endpoint.MAX_REPLY_BYTES)"
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


class GuardRefusal(openai.APIError):
    """A reply the guard refuses for good: the same request would get the same reply.

    An ``openai`` error, so that the client raises it as it is (``openai._base_client``
    re-raises an ``OpenAIError`` from its transport unwrapped, where any other exception
    becomes a retried connection error), and Inspect, finding no status and no transient
    code or type in it (``inspect_ai.model._openai.openai_classify_retry``), does not retry
    it either; its body has the guard's type, which ``endpoint.describe_error`` quotes as it
    is.
    """

    def __init__(self, message: str, request: httpx2.Request) -> None:
        super().__init__(message, request, body={"message": message, "type": GUARD})


class ReplyTooLarge(GuardRefusal):
    """A reply over the cap: declared so, or past it while it was read (streamed or not)."""


class NotStreamed(GuardRefusal):
    """A server that answered a request for a stream with one whole reply.

    The ``openai`` client would read that reply as a stream of no events, which Inspect
    raises as its (retried) ``NoStreamDataError``; the preflight's streamed request catches
    this instead and times the server unstreamed (``endpoint.probe``).
    """


class _CappedStream(httpx2.AsyncByteStream):
    """A streamed reply's bytes as they come, until they pass the cap."""

    def __init__(
        self,
        response: httpx2.Response,
        request: httpx2.Request,
        max_bytes: int,
        too_large: Callable[[str], str],
    ) -> None:
        self.response, self.request = response, request
        self.max_bytes, self.too_large = max_bytes, too_large

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        async for chunk in self.response.stream:  # type: ignore[union-attr]
            seen += len(chunk)
            if seen > self.max_bytes:
                await self.response.aclose()
                what = f"(streamed) passed {self.max_bytes:,} bytes"
                raise ReplyTooLarge(self.too_large(what), self.request)
            yield chunk

    async def aclose(self) -> None:
        await self.response.aclose()


def _asks_for_a_stream(request: httpx2.Request) -> bool:
    """Whether a request's JSON body asks for ``stream: true`` (the ``openai`` client sends
    its body whole, so it can be read here)."""
    try:
        body = json.loads(request.content)
    except (ValueError, httpx2.RequestNotRead):
        return False
    return isinstance(body, dict) and body.get("stream") is True


def _no_choices(content: bytes, encoding: str | None) -> str | None:
    """What is wrong with a 200 completion body that has no choices, or None when it has."""
    if encoding not in (None, "", "identity"):
        return None  # compressed: the client decodes it; nothing to check here
    try:
        body = json.loads(content)
    except ValueError:
        return f"the server answered HTTP 200 with a body that is not JSON: {excerpt(content)}"
    if not isinstance(body, dict):
        return None  # Inspect already names a non-object reply
    choices = body.get("choices")
    if isinstance(choices, list) and choices:
        return None
    if "error" in body:
        return f"the server answered HTTP 200 with an error: {server_words(body)}"
    return f"the server answered HTTP 200 without choices: {excerpt(content)}"


def _refusal(request: httpx2.Request, message: str) -> httpx2.Response:
    payload = {"error": {"message": message, "type": GUARD}}
    return httpx2.Response(502, json=payload, request=request)
