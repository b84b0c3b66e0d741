"""End to end against a real OpenAI-compatible server: ``transformers serve`` on gapscope's
embedded SmolLM2 checkpoint, bound to 127.0.0.1, reached as ``openai-api/local/smollm2`` (the
recipe of docs/models.md). Skipped, with the reason, where the server cannot start (no
``transformers`` CLI, no FastAPI/Uvicorn, no checkpoint, a port that never answers)."""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gapscope.app.main import app

pytestmark = pytest.mark.slow  # loads (and decodes with) a model in a server process
SERVED = "smollm2"
START_S = 180.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/models", timeout=5) as reply:
            return bool(reply.status == 200)
    except OSError:
        return False


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL of ``transformers serve smollm2`` on a free port of 127.0.0.1."""
    cli = Path(sys.executable).parent / "transformers"
    if not cli.exists():
        pytest.skip(f"no transformers CLI next to {sys.executable}")
    missing = [m for m in ("fastapi", "uvicorn") if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"transformers serve needs {', '.join(missing)} (transformers[serving])")
    from gapscope.models.embedded import embedded_checkpoint

    try:
        checkpoint = embedded_checkpoint()
    except Exception as exc:  # the embedded package missing or not buildable here
        pytest.skip(f"no embedded checkpoint: {exc}")
    where = tmp_path_factory.mktemp("serve")
    (where / SERVED).symlink_to(checkpoint)  # the served name is the path as given
    port = _free_port()
    command = [str(cli), "serve", SERVED, "--host", "127.0.0.1", "--port", str(port)]
    env = os.environ | {"HF_HUB_OFFLINE": "1"}
    log = (where / "serve.log").open("w")
    process = subprocess.Popen(
        [*command, "--device", "cpu"], cwd=where, env=env, stdout=log, stderr=log
    )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + START_S
        while not _answers(url):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.skip(
                    f"transformers serve did not start: {(where / 'serve.log').read_text()[-500:]}"
                )
            time.sleep(1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


def test_a_run_against_transformers_serve_plans_its_time_and_finishes(
    server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOCAL_BASE_URL", server)
    monkeypatch.setenv("LOCAL_API_KEY", "none")
    args = ["run", "s2b", "--preset", "demo", "--seeds", "1", "--max-tokens", "8"]
    result = CliRunner().invoke(
        app, [*args, "--model", f"openai-api/local/{SERVED}", "--log-dir", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    assert f"time: openai-api/local/{SERVED}: about " in result.stderr
    assert "tokens/s (measured on 3 probes of " in result.stderr
    assert len(list(tmp_path.glob("*.eval"))) == 1


def test_a_wrong_served_name_quotes_transformers_serve(
    server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOCAL_BASE_URL", server)
    monkeypatch.setenv("LOCAL_API_KEY", "none")
    model = "openai-api/local/not-served"
    args = ["run", "s2b", "--preset", "demo", "--seeds", "1", "--model", model]
    result = CliRunner().invoke(app, [*args, "--log-dir", str(tmp_path)])
    assert result.exit_code == 2, result.output
    (line,) = [ln for ln in result.stderr.splitlines() if ln.startswith("error:")]
    assert model in line and "Server is pinned to 'smollm2'" in line
    assert not list(tmp_path.glob("*.eval"))
