"""A local OpenAI-compatible chat server for tests: Inspect's real ``openai-api`` provider and the
real ``openai`` client talk to it over HTTP on 127.0.0.1, and it fails the requests it is told
to fail.

It answers S2B-LM games "Answer: same" and everything else ``\\boxed{1}``; ``fail`` decides per
request (numbered from 1) whether to answer with an HTTP error status instead.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class StubServer:
    """What the server saw, and its failure policy: ``fail(n, body) -> status or None``."""

    fail: Callable[[int, dict[str, Any]], int | None] = lambda n, body: None
    requests: int = 0
    failures: int = 0
    answered: int = 0
    url: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reply(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self.lock:
            self.requests += 1
            status = self.fail(self.requests, body)
            if status is not None:
                self.failures += 1
                return status, {"error": {"message": "stub failure", "type": "server_error"}}
            self.answered += 1
        last = str(body["messages"][-1].get("content", ""))
        text = "Answer: same" if "Game " in last or "Sync round" in last else "\\boxed{1}"
        return 200, {
            "id": f"stub-{self.requests}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "stub"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13},
        }


def _handler(stub: StubServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            status, payload = stub.reply(body)
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
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
