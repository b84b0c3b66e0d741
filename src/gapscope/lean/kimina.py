"""The server backend: kimina-lean-server (project-numina) over HTTP.

API (kimina-lean-server ``server/routers/check.py``): ``POST /api/check`` with
``{"snippets": [{"id", "code"}], "timeout": s, "reuse": true}`` answers
``{"results": [{"id", "time", "error"?, "response"?}]}`` where ``response`` is the REPL's own
JSON (or ``{"message"}`` for a REPL-level failure) and ``error`` a server-side failure
("... timed out ..." for timeouts). ``GET /health`` answers ``{"status": "ok"}``. An API key,
when the server has one, goes in the ``X-Auth-Token`` header.

The server splits leading ``import`` lines off as its own header and pools REPLs per header,
so the header is sent inline; the soundness rule (axioms) is applied here, not trusted to the
server, whose own notion of "valid" ignores axioms. The server sandboxes on its side.

The server's API has no way to run a query outside the environment the model's code built
(no pickling), so a request naming ``required`` theorems can at best be UNVERIFIED here: its
text passed every rule, but nothing the model could not influence confirmed the theorem
(docs/lean.md). Replies are read as a stream and refused past ``max_reply_bytes``.

Every HTTP exchange has a deadline for the whole exchange (connect, send, every read), not
per read as httpx timeouts are: a server trickling its reply a byte at a time would otherwise
hold a request forever. The exchange runs as a coroutine under ``asyncio.wait_for``, which
cancels it at the deadline wherever it is.
"""

from __future__ import annotations

import asyncio
import dataclasses
import email.utils
import math
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from gapscope.lean.backend import CheckRequest, LeanUnavailable
from gapscope.lean.base import CachedBackend, is_import_line, split_imports
from gapscope.lean.cache import VerdictCache
from gapscope.lean.process import DEFAULT_MAX_REPLY_BYTES, ReplyTooLarge
from gapscope.lean.protocol import ProtocolError, parse_response
from gapscope.lean.soundness import Prepared, judge, prepare
from gapscope.lean.verdict import UNREACHED_CHECK, LeanVerdict, Status, with_text_label

CHECK_PATH = "/api/check"
HEALTH_PATH = "/health"
MAX_RETRY_AFTER_S = 300.0
"""A server asking for a longer pause than this is treated as down, so a run cannot stall."""


class _BatchFailed(RuntimeError):
    """A batch got no usable answer; every snippet in it becomes SERVER_ERROR."""


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("Retry-After")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


@dataclasses.dataclass(frozen=True)
class _Snippet:
    id: str
    code: str
    prepared: Prepared


def _snippet(index: int, request: CheckRequest) -> _Snippet:
    header, body = split_imports(request.header, request.code)
    prepared = prepare(body, request.required)
    prefix = f"{header}\n\n" if header else ""
    code = prefix + prepared.code
    # The server strips leading import/blank lines; count axiom-query lines from its body so
    # that no user line is ever mistaken for one of ours (see ``judge``).
    lines = code.split("\n")
    stripped = 0
    while stripped < len(lines) and is_import_line(lines[stripped]):
        stripped += 1
    code_lines = len(prefix.split("\n")) - 1 + prepared.code_lines - stripped
    return _Snippet(str(index), code, dataclasses.replace(prepared, code_lines=code_lines))


def _verdict(result: dict[str, Any], snippet: _Snippet) -> LeanVerdict:
    elapsed = float(result.get("time") or 0.0)
    error = result.get("error")
    if error:
        status = Status.TIMEOUT if "timed out" in str(error) else Status.SERVER_ERROR
        return LeanVerdict(status, elapsed_s=elapsed, detail=f"server: {error}")
    response = result.get("response")
    if not isinstance(response, dict):
        return LeanVerdict(
            Status.SERVER_ERROR,
            elapsed_s=elapsed,
            detail=f"server result has no response: {result!r:.200}",
        )
    try:
        verdict = with_text_label(judge(parse_response(response), snippet.prepared, elapsed))
    except ProtocolError as exc:
        return LeanVerdict(Status.SERVER_ERROR, elapsed_s=elapsed, detail=str(exc))
    if verdict.valid and snippet.prepared.required:
        return dataclasses.replace(
            verdict,
            status=Status.UNVERIFIED,
            detail="accepted as text only: a kimina server cannot check the official theorem "
            "outside the model's own environment; use a local backend for a VALID verdict",
        )
    return verdict


class KiminaBackend(CachedBackend):
    """Checks code on a kimina-lean-server; batches, retries, backs off, never raises per proof."""

    def __init__(
        self,
        url: str,
        *,
        api_key: str | None = None,
        toolchain: str | None = None,
        batch_size: int = 8,
        max_workers: int = 2,
        max_retries: int = 4,
        backoff_s: float = 1.0,
        max_backoff_s: float = 30.0,
        http_slack_s: float = 30.0,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
        cache: VerdictCache | None = None,
        progress: bool | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(cache, progress)
        if batch_size < 1 or max_workers < 1 or max_retries < 0:
            raise ValueError("batch_size and max_workers must be >= 1, max_retries >= 0")
        self.url = url.rstrip("/")
        self._toolchain = toolchain or f"kimina@{self.url}"
        self.batch_size, self.max_retries = batch_size, max_retries
        self.backoff_s, self.max_backoff_s, self.http_slack_s = (
            backoff_s,
            max_backoff_s,
            http_slack_s,
        )
        self._sleep = sleep
        self.max_reply_bytes = max_reply_bytes
        self._headers = {"X-Auth-Token": api_key} if api_key else {}
        self._transport = transport
        self._executor = ThreadPoolExecutor(max_workers, thread_name_prefix="kimina")

    @property
    def toolchain(self) -> str:
        return self._toolchain

    def _exchange(
        self, method: str, path: str, deadline_s: float, body: Any = None
    ) -> httpx.Response:
        """One HTTP request whose whole exchange ends within ``deadline_s``; TimeoutError if
        it does not. Runs its own event loop, so call it from a worker thread (as
        ``_check_uncached`` and ``health`` do), never from a running loop."""

        async def go() -> httpx.Response:
            async with (
                httpx.AsyncClient(
                    base_url=self.url, headers=self._headers, transport=self._transport
                ) as client,
                client.stream(method, path, json=body, timeout=deadline_s) as streamed,
            ):
                chunks: list[bytes] = []
                size = 0
                async for chunk in streamed.aiter_bytes():
                    size += len(chunk)
                    if size > self.max_reply_bytes:
                        raise ReplyTooLarge(
                            f"the reply of {self.url} passed the cap of {self.max_reply_bytes} "
                            "bytes (max_reply_bytes)"
                        )
                    chunks.append(chunk)
                # The bytes are decoded already: drop the headers that describe the encoding.
                headers = [
                    (k, v)
                    for k, v in streamed.headers.items()
                    if k.lower() not in ("content-encoding", "content-length")
                ]
                return httpx.Response(
                    streamed.status_code, headers=headers, content=b"".join(chunks)
                )

        async def bounded() -> httpx.Response:
            return await asyncio.wait_for(go(), deadline_s)

        return asyncio.run(bounded())

    def health(self, deadline_s: float = 10.0) -> None:
        """Raise LeanUnavailable unless the server answers its health check in time."""
        try:
            response = self._executor.submit(
                self._exchange, "GET", HEALTH_PATH, deadline_s
            ).result()
        except TimeoutError:
            raise LeanUnavailable(
                f"kimina-lean-server at {self.url} did not answer {HEALTH_PATH} within "
                f"{deadline_s} s; is it overloaded, or is the URL right?"
            ) from None
        except (httpx.HTTPError, ReplyTooLarge) as exc:
            raise LeanUnavailable(
                f"kimina-lean-server at {self.url} is unreachable ({exc}); start it (see "
                "https://github.com/project-numina/kimina-lean-server) or fix the URL."
            ) from None
        if response.status_code != 200:
            raise LeanUnavailable(
                f"kimina-lean-server at {self.url} answered HTTP {response.status_code} to "
                f"{HEALTH_PATH}: {response.text[:200]} (an API key goes in LEAN_SERVER_API_KEY)"
            )

    def _check_uncached(
        self, requests: Sequence[CheckRequest], done: Callable[[int], None]
    ) -> list[LeanVerdict]:
        snippets = [_snippet(i, r) for i, r in enumerate(requests)]
        batches = [
            list(range(start, min(start + self.batch_size, len(requests))))
            for start in range(0, len(requests), self.batch_size)
        ]
        verdicts: list[LeanVerdict] = [LeanVerdict(Status.SERVER_ERROR)] * len(requests)

        def run(batch: list[int]) -> None:
            timeout = max(requests[i].timeout_s for i in batch)
            for i, verdict in zip(
                batch, self._check_batch([snippets[i] for i in batch], timeout), strict=True
            ):
                verdicts[i] = verdict
            done(len(batch))

        for future in [self._executor.submit(run, batch) for batch in batches]:
            future.result()
        return verdicts

    def _check_batch(self, snippets: list[_Snippet], timeout_s: float) -> list[LeanVerdict]:
        payload = {
            "snippets": [{"id": s.id, "code": s.code} for s in snippets],
            "timeout": math.ceil(timeout_s),
            "reuse": True,
        }
        start = time.monotonic()
        try:
            body = self._post(payload, timeout_s * len(snippets) + self.http_slack_s)
            results = body.get("results") if isinstance(body, dict) else None
            if not isinstance(results, list):
                raise _BatchFailed(f"the reply has no 'results' list: {body!r:.200}")
        except _BatchFailed as exc:
            elapsed = time.monotonic() - start
            failed = LeanVerdict(
                Status.SERVER_ERROR, elapsed_s=elapsed, detail=str(exc), checks=(UNREACHED_CHECK,)
            )
            return [failed] * len(snippets)
        by_id = {str(r.get("id")): r for r in results if isinstance(r, dict)}
        return [
            _verdict(by_id[s.id], s)
            if s.id in by_id
            else LeanVerdict(Status.SERVER_ERROR, detail=f"no result for snippet {s.id}")
            for s in snippets
        ]

    def _post(self, payload: dict[str, Any], http_timeout_s: float) -> Any:
        reason = ""
        for attempt in range(self.max_retries + 1):
            wait = min(self.max_backoff_s, self.backoff_s * 2**attempt)
            try:
                response = self._exchange("POST", CHECK_PATH, http_timeout_s, payload)
            except ReplyTooLarge as exc:
                raise _BatchFailed(str(exc)) from None
            except TimeoutError:
                reason = f"no complete reply from {self.url} within {http_timeout_s:.1f} s"
            except httpx.TransportError as exc:
                reason = f"cannot reach {self.url}: {exc!r}"
            else:
                if response.status_code == 200:
                    try:
                        return response.json()
                    except ValueError:
                        raise _BatchFailed(f"reply is not JSON: {response.text[:200]!r}") from None
                reason = f"HTTP {response.status_code}: {response.text[:200]}"
                if response.status_code == 429:
                    asked = _retry_after(response)
                    if asked is not None and asked > MAX_RETRY_AFTER_S:
                        raise _BatchFailed(f"{reason} (Retry-After {asked:.0f} s is too long)")
                    wait = wait if asked is None else asked
                elif response.status_code < 500:
                    raise _BatchFailed(reason)
            if attempt < self.max_retries:
                self._sleep(wait)
        raise _BatchFailed(f"{reason} (gave up after {self.max_retries + 1} attempts)")

    def close(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)
