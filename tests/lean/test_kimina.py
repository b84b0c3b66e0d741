"""The kimina-lean-server backend against an in-process fake server (httpx MockTransport)."""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

from gapscope.lean.backend import CheckRequest, LeanUnavailable
from gapscope.lean.kimina import KiminaBackend
from gapscope.lean.verdict import CONTROL_CHECK, UNREACHED_CHECK, Status

STD = "[propext, Classical.choice, Quot.sound]"


def repl_answer(code: str) -> dict[str, Any]:
    """What kimina would return for one snippet, in the REPL's JSON, driven by markers."""
    if "fake:timeout" in code:
        return {"error": "Lean REPL command timed out in 1.0 seconds"}
    axioms = "[propext, sorryAx]" if "fake:sorryax" in code else STD
    messages = [
        {
            "severity": "info",
            "pos": {"line": n, "column": 0},
            "endPos": None,
            "data": f"'{m[1]}' depends on axioms: {axioms}",
        }
        for n, line in enumerate(code.split("\n"), 1)
        if (m := re.match(r"#print axioms (\S+)", line))
    ]
    if "fake:error" in code:
        messages.insert(0, {"severity": "error", "pos": {"line": 1, "column": 0}, "data": "bad"})
    if "fake:replmsg" in code:
        return {"response": {"message": "Unknown environment."}}
    return {"response": {"env": 0, "messages": messages}}


def server(
    fail_first: list[httpx.Response] | None = None,
) -> tuple[httpx.MockTransport, list[dict[str, Any]]]:
    seen: list[dict[str, Any]] = []
    queued = list(fail_first or [])

    def handle(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/health":
            return httpx.Response(200, json={"status": "ok"})
        assert request.url.path == "/api/check"
        body = json.loads(request.content)
        seen.append(body)
        if queued:
            return queued.pop(0)
        results = [{"id": s["id"], "time": 0.5, **repl_answer(s["code"])} for s in body["snippets"]]
        return httpx.Response(200, json={"results": results})

    return httpx.MockTransport(handle), seen


def backend(transport: httpx.AsyncBaseTransport, sleeps: list[float], **kw: Any) -> KiminaBackend:
    record: Callable[[float], None] = sleeps.append
    return KiminaBackend("http://kimina.test:8000", transport=transport, sleep=record, **kw)


def thm(marker: str = "", name: str = "foo") -> str:
    return f"theorem {name} : True := trivial -- fake:{marker}"


def test_batches_and_maps_verdicts_in_order() -> None:
    transport, seen = server()
    sleeps: list[float] = []
    markers = ["", "error", "sorryax", "timeout", "replmsg"]
    with backend(transport, sleeps, batch_size=2, max_workers=1) as kimina:
        verdicts = kimina.check_many(
            [CheckRequest(thm(m, f"t{i}"), "import Mathlib", 7.5) for i, m in enumerate(markers)]
        )
    assert [v.status for v in verdicts] == [
        Status.VALID,
        Status.LEAN_ERROR,
        Status.SORRY,
        Status.TIMEOUT,
        Status.SERVER_ERROR,
    ]
    assert "sorryAx" in verdicts[2].detail and verdicts[0].elapsed_s == 0.5
    # the REPL-level error is followed by one control, which the server answers: the code's doing
    assert [len(b["snippets"]) for b in seen] == [2, 2, 1, 1]
    assert ": True := trivial" in seen[3]["snippets"][0]["code"]
    assert verdicts[4].checks == (CONTROL_CHECK,)
    assert seen[0]["timeout"] == 8 and seen[0]["snippets"][0]["code"].startswith("import Mathlib\n")
    assert "#print axioms t0" in seen[0]["snippets"][0]["code"]
    assert sleeps == []


def test_retries_server_errors_with_exponential_backoff() -> None:
    transport, seen = server([httpx.Response(500, text="boom"), httpx.Response(503, text="busy")])
    sleeps: list[float] = []
    with backend(transport, sleeps, backoff_s=0.5) as kimina:
        assert kimina.check(thm()).valid
    assert sleeps == [0.5, 1.0] and len(seen) == 3


def test_429_respects_retry_after() -> None:
    transport, _ = server(
        [httpx.Response(429, headers={"Retry-After": "7"}, text="No available REPLs")]
    )
    sleeps: list[float] = []
    with backend(transport, sleeps) as kimina:
        assert kimina.check(thm()).valid
    assert sleeps == [7.0]


def test_gives_up_after_retries_with_server_error_verdicts() -> None:
    transport, seen = server([httpx.Response(500, text="down")] * 10)
    sleeps: list[float] = []
    with backend(transport, sleeps, max_retries=3, backoff_s=1.0, max_backoff_s=3.0) as kimina:
        verdicts = kimina.check_many([CheckRequest(thm(name="a")), CheckRequest(thm(name="b"))])
    assert all(v.status is Status.SERVER_ERROR and "gave up after 4" in v.detail for v in verdicts)
    assert sleeps == [1.0, 2.0, 3.0] and len(seen) == 4


def test_client_errors_are_not_retried() -> None:
    transport, seen = server([httpx.Response(401, text="Invalid API key")])
    sleeps: list[float] = []
    with backend(transport, sleeps) as kimina:
        verdict = kimina.check(thm())
    assert verdict.status is Status.SERVER_ERROR and "401" in verdict.detail and len(seen) == 1
    assert verdict.checks == (UNREACHED_CHECK,)  # a batch with no answer never reached the code


def test_unreachable_server() -> None:
    sleeps: list[float] = []
    with KiminaBackend("http://127.0.0.1:9", max_retries=1, sleep=sleeps.append) as kimina:
        verdict = kimina.check(thm())
        assert verdict.status is Status.SERVER_ERROR and "cannot reach" in verdict.detail
        with pytest.raises(LeanUnavailable, match="unreachable"):
            kimina.health()
    assert sleeps == [1.0]


def test_health_and_api_key_header() -> None:
    keys: list[str | None] = []

    def handle(request: httpx.Request) -> httpx.Response:
        keys.append(request.headers.get("X-Auth-Token"))
        return httpx.Response(200, json={"status": "ok"})

    with KiminaBackend("http://k:1", api_key="s3cret", transport=httpx.MockTransport(handle)) as k:
        k.health()
    assert keys == ["s3cret"]


@contextmanager
def trickling_server(bytes_per_s: float = 20.0) -> Iterator[str]:
    """An HTTP server on 127.0.0.1 that sends its (long) reply one byte at a time."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)
    stop = threading.Event()
    reply = (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n"
        + b" " * 200
    )

    def trickle(conn: socket.socket) -> None:
        with conn:
            conn.recv(1 << 16)
            for byte in reply:
                if stop.is_set():
                    return
                try:
                    conn.sendall(bytes([byte]))
                except OSError:
                    return
                time.sleep(1 / bytes_per_s)

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=trickle, args=(conn,), daemon=True).start()

    server_thread = threading.Thread(target=serve, daemon=True)
    server_thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        server_thread.join()
        listener.close()


def test_a_trickling_reply_is_cut_at_the_request_deadline() -> None:
    """Regression: httpx timeouts are per read, so a reply trickling in (each read well under
    the timeout) held the request until the server finished (~14 s here)."""
    sleeps: list[float] = []
    with (
        trickling_server() as url,
        KiminaBackend(url, max_retries=0, http_slack_s=0.5, sleep=sleeps.append) as kimina,
    ):
        start = time.monotonic()
        verdict = kimina.check(thm(), timeout_s=0.5)
        elapsed = time.monotonic() - start
    assert verdict.status is Status.SERVER_ERROR and "no complete reply" in verdict.detail
    assert elapsed < 3.0


def test_health_check_has_a_deadline_too() -> None:
    with trickling_server() as url, KiminaBackend(url) as kimina:
        start = time.monotonic()
        with pytest.raises(LeanUnavailable, match="did not answer"):
            kimina.health(deadline_s=0.5)
        assert time.monotonic() - start < 3.0


def test_an_official_theorem_is_never_valid_on_kimina_only_unverified() -> None:
    """kimina cannot run a query outside the model's environment, so the restatement attacks
    (tests/lean/test_acceptance.py) could pass its text: a required name caps the verdict."""
    transport, _ = server()
    with backend(transport, []) as kimina:
        plain, official = kimina.check_many(
            [
                CheckRequest(thm(name="foo")),
                CheckRequest(thm(name="p_false"), required=("p_false",), challenge="x"),
            ]
        )
    assert plain.status is Status.VALID and plain.checker == "repl-text"
    assert official.status is Status.UNVERIFIED and "outside" in official.detail


def test_a_reply_past_the_cap_is_refused_naming_it() -> None:
    """Regression: a 200 MB reply was read whole (760 MB resident)."""
    huge = httpx.Response(200, content=b'{"results": [' + b" " * (3 * 2**20) + b"]}")
    transport, _ = server([huge])
    with backend(transport, [], max_reply_bytes=2**20, max_retries=0) as kimina:
        verdict = kimina.check(thm())
    assert verdict.status is Status.SERVER_ERROR
    assert "max_reply_bytes" in verdict.detail and str(2**20) in verdict.detail
