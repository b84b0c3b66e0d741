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
    """An ``httpx`` transport that refuses oversized replies and completions without choices.

    A refusal is an HTTP 502 whose ``error.message`` quotes the server (an error body under
    200) or says what was wrong (the size); the client then raises its ordinary status error.
    A streamed reply (``text/event-stream``) is passed on as it comes, counted: past the cap
    its reading fails with :class:`ReplyTooLarge` (its headers are already delivered, so it
    cannot become a 502).
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
            return _refusal(request, self._too_large(f"declares {int(declared):,} bytes"))
        body = bytearray()
        async for chunk in response.stream:  # type: ignore[union-attr]
            body.extend(chunk)
            if len(body) > self.max_bytes:
                await response.aclose()
                return _refusal(request, self._too_large(f"passed {self.max_bytes:,} bytes"))
        await response.aclose()
        content = bytes(body)
        if response.status_code == 200 and request.url.path.endswith("/chat/completions"):
            problem = _no_choices(content, response.headers.get("content-encoding"))
            if problem:
                return _refusal(request, problem)
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


class ReplyTooLarge(openai.APIError):
    """A streamed reply passed the cap while it was read.

    An ``openai`` error, so that the client raises it as it is (not as a connection error it
    would retry) and Inspect, finding no transient code in it, does not retry it either; its
    body has the guard's type, which ``endpoint.describe_error`` quotes as it is.
    """

    def __init__(self, message: str, request: httpx2.Request) -> None:
        super().__init__(message, request, body={"message": message, "type": GUARD})


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
