"""A local OpenAI-compatible chat server for tests: Inspect's real ``openai-api`` provider and the
real ``openai`` client talk to it over HTTP on 127.0.0.1, and it fails the requests it is told
to fail.

It answers S2B-LM games "Answer: same" and everything else ``\\boxed{1}``; ``fail`` decides per
request (numbered from 1) whether to answer with an HTTP error status instead. ``mode`` makes it
misbehave as real servers do (see :data:`MODES`); ``served`` and ``api_key`` make it refuse
another model name (404) or key (401) with the server's own words, as vLLM and
``transformers serve`` do.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODES = (
    "ok",
    "tool-call",
    "error-under-200",
    "empty-choices",
    "trickle",
    "oversized",
    "streamed-oversized",
    "slow",
    "no-stream",
)
"""``ok``: answers; ``tool-call``: every reply is a tool call; ``error-under-200``: an error body
with status 200; ``empty-choices``: a completion with ``choices: []``; ``trickle``: a reply sent
one byte a second; ``oversized``: a reply that declares (and streams) 200 MB;
``streamed-oversized``: a ``text/event-stream`` reply of 200 MB of chunks with no declared
length (as a server streaming without end); ``slow``: answers after ``delay`` seconds;
``no-stream``: answers a request for a stream with the whole completion as JSON (as a server
that ignores ``stream: true``)."""
OVERSIZED_BYTES = 200 * 1024 * 1024
_DELTA = json.dumps(
    {
        "id": "stub-stream",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "stub",
        "choices": [{"index": 0, "delta": {"content": "word " * 12000}, "finish_reason": None}],
    }
).encode()
"""One chunk (60 kB) of a streamed reply that does not end (``streamed-oversized``)."""


@dataclass
class StubServer:
    """What the server saw, and its failure policy: ``fail(n, body) -> status or None``."""

    fail: Callable[[int, dict[str, Any]], int | None] = lambda n, body: None
    mode: str = "ok"
    served: str | None = None
    api_key: str | None = None
    delay: float = 0.0
    failure_words: str = "stub failure"
    """The ``error.message`` of a request ``fail`` fails."""
    completion_tokens: int = 3
    after: int = 0
    """``mode`` applies from request ``after + 1`` on (the first ones are answered)."""
    requests: int = 0
    failures: int = 0
    answered: int = 0
    url: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def acting(self) -> str:
        """The mode of the request being answered."""
        return self.mode if self.requests > self.after else "ok"

    def reply(self, body: dict[str, Any], key: str = "") -> tuple[int, dict[str, Any], str]:
        """The status, the body and the mode of one request."""
        with self.lock:
            self.requests += 1
            mode = self.acting()
            if self.api_key is not None and key != f"Bearer {self.api_key}":
                refused = {"message": "Incorrect API key provided: stub-refused"}
                return 401, {"error": refused}, mode
            if self.served is not None and body.get("model") != self.served:
                words = f"The model `{body.get('model')}` does not exist (served: {self.served})"
                return 404, {"error": {"message": words, "type": "NotFoundError"}}, mode
            status = self.fail(self.requests, body)
            if status is not None:
                self.failures += 1
                failure = {"message": self.failure_words, "type": "server_error"}
                return status, {"error": failure}, mode
            self.answered += 1
        if mode == "error-under-200":
            overloaded = {"message": "stub overloaded: no capacity", "code": 503}
            return 200, {"error": overloaded}, mode
        return 200, self._completion(body, mode), mode

    def _completion(self, body: dict[str, Any], mode: str) -> dict[str, Any]:
        last = str(body["messages"][-1].get("content", ""))
        text = "Answer: same" if "Game " in last or "Sync round" in last else "\\boxed{1}"
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if mode == "tool-call":
            call: dict[str, Any] = {"index": 0, "id": f"call-{self.requests}", "type": "function"}
            call["function"] = {"name": "python", "arguments": '{"code": "print(1)"}'}
            message = {"role": "assistant", "content": None, "tool_calls": [call]}
        if mode == "slow":
            time.sleep(self.delay)
        choices = [{"index": 0, "message": message, "finish_reason": "stop"}]
        tokens = self.completion_tokens
        return {
            "id": f"stub-{self.requests}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "stub"),
            "choices": [] if mode == "empty-choices" else choices,
            "usage": {"prompt_tokens": 1, "completion_tokens": tokens, "total_tokens": tokens + 1},
        }


def _handler(stub: StubServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            status, payload, mode = stub.reply(body, self.headers.get("Authorization", ""))
            if body.get("stream") and status == 200 and mode in ("ok", "tool-call", "slow"):
                return self._stream(payload)
            data = json.dumps(payload).encode()
            self.send_response(status)
            if mode == "streamed-oversized":
                self.send_header("Content-Type", "text/event-stream")  # ends when it closes
            else:
                self.send_header("Content-Type", "application/json")
                size = OVERSIZED_BYTES if mode == "oversized" else len(data)
                self.send_header("Content-Length", str(size))
            self.end_headers()
            with contextlib.suppress(OSError):  # the client gave up (as it should)
                self._send(data, mode)

        def _stream(self, completion: dict[str, Any]) -> None:
            """A requested stream (the preflight's timed request): the reply as one chunk,
            then its usage, as OpenAI's ``stream_options.include_usage`` sends them."""
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            (choice,) = completion["choices"]
            head = {k: completion[k] for k in ("id", "created", "model")}
            chunks = [
                head | {"object": "chat.completion.chunk", "choices": [choice | {"delta": m}]}
                for m in [choice.pop("message")]
            ]
            usage = head | {"object": "chat.completion.chunk", "choices": []}
            chunks.append(usage | {"usage": completion["usage"]})
            with contextlib.suppress(OSError):
                for chunk in chunks:
                    self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                self.wfile.write(b"data: [DONE]\n\n")

        def _send(self, data: bytes, mode: str) -> None:
            if mode == "trickle":
                for i in range(len(data)):
                    self.wfile.write(data[i : i + 1])
                    self.wfile.flush()
                    time.sleep(1.0)
            elif mode in ("oversized", "streamed-oversized"):
                line = b"data: " + _DELTA + b"\n\n" if mode == "streamed-oversized" else b" "
                chunk = line * (1024 * 1024 // len(line))
                for _ in range(OVERSIZED_BYTES // len(chunk)):
                    self.wfile.write(chunk)
            else:
                self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # quiet in test output
            pass

    return Handler


@contextmanager
def serve(stub: StubServer) -> Iterator[StubServer]:
    """Run ``stub`` on a free port of 127.0.0.1 until the block ends."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(stub))
    stub.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield stub
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def closed_port_url() -> str:
    """The base URL of a port on 127.0.0.1 that nothing listens on (a server that is down)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def asks_for_a_boxed_answer(body: dict[str, Any]) -> bool:
    """Whether a request is a math rollout (OracleLadder's system prompt asks for \\boxed{})."""
    return any("\\boxed" in str(m.get("content", "")) for m in body.get("messages", []))


def main() -> None:
    """Serve until killed, as a separate process a test can kill like a real server: prints
    the base URL, then ``rollout`` (flushed) when the first math rollout arrives. Arguments:
    the seconds each reply after the preflight's is held back."""
    import sys

    from gapscope.models import PREFLIGHT_REQUESTS

    said: list[bool] = []

    def announce(n: int, body: dict[str, Any]) -> None:
        if asks_for_a_boxed_answer(body) and not said:
            said.append(True)
            print("rollout", flush=True)

    delay = float(sys.argv[1]) if len(sys.argv) > 1 else 0.0
    held = StubServer(fail=announce, mode="slow", delay=delay, after=PREFLIGHT_REQUESTS)
    with serve(held) as stub:
        print(stub.url, flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
