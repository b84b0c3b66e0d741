"""Studies stopped the ways users see them stopped, for the tests of how their logs are read.

Each runs ``gapscope profile`` (OracleLadder, quick budget) in a child process against the
local OpenAI-compatible stub (:mod:`tests.openai_stub`) over HTTP, and stops it while its 16
rollouts are in flight: a real SIGINT to the command (what Ctrl-C sends), or a real SIGKILL
to the server process. What Inspect writes then (samples left in the log with
``CancelledError`` or ``RetryError(APIConnectionError)``) is what the readers are tested on;
a faked log (samples dropped) would not test them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gapscope.models import PREFLIGHT_REQUESTS
from tests.openai_stub import StubServer, asks_for_a_boxed_answer, serve

ROOT = Path(__file__).resolve().parents[1]
HELD_S = 120.0
"""How long the stub holds each rollout's reply: longer than the test, so every rollout is
still in flight when the run is stopped."""


@dataclass(frozen=True)
class StoppedStudy:
    log_dir: Path
    exit_code: int
    envelope: dict[str, Any]
    """The command's ``--json`` envelope."""
    url: str


def _profile(log_dir: Path, url: str, model: str) -> subprocess.Popen[str]:
    env = dict(os.environ, STUB_BASE_URL=url, STUB_API_KEY="test-key")
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    args = ["profile", "--model", f"openai-api/stub/{model}", "--budget", "quick"]
    args += ["--diagnostics", "ladder", "--log-dir", str(log_dir), "--json"]
    args += ["--retry-attempts", "0", "--max-retries", "1", "--timeout", "30"]
    return subprocess.Popen(
        [sys.executable, "-m", "gapscope.app.main", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def _stopped(log_dir: Path, child: subprocess.Popen[str], url: str) -> StoppedStudy:
    out, _ = child.communicate(timeout=300)
    return StoppedStudy(log_dir, child.returncode, json.loads(out), url)


def interrupted_study(log_dir: Path) -> StoppedStudy:
    """Ctrl-C (SIGINT to the command) a second after the first rollout reached the server."""
    children: list[subprocess.Popen[str]] = []

    def interrupt_soon(n: int, body: dict[str, Any]) -> None:
        if asks_for_a_boxed_answer(body) and children:
            child = children.pop()
            threading.Timer(1.0, child.send_signal, (signal.SIGINT,)).start()

    slow = StubServer(fail=interrupt_soon, mode="slow", delay=HELD_S, after=PREFLIGHT_REQUESTS)
    with serve(slow) as stub:
        children.append(child := _profile(log_dir, stub.url, "interrupted"))
        return _stopped(log_dir, child, stub.url)


def endpoint_killed_study(log_dir: Path) -> StoppedStudy:
    """SIGKILL the server process a second after the first rollout reached it."""
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.openai_stub", str(HELD_S)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        child = _profile(log_dir, url, "killed")
        assert server.stdout.readline().strip() == "rollout"
        threading.Event().wait(1.0)
    finally:
        server.kill()
        server.wait()
    return _stopped(log_dir, child, url)
