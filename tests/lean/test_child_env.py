"""The model's Lean must not read our API keys: every process that elaborates model-written
code (the REPL, comparator, the sandbox around them) starts from an allow-listed environment,
and the screen refuses ``include_str`` (which reads any file, ``/proc/self/environ`` too)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gapscope.lean.bounded import run_bounded
from gapscope.lean.childenv import ENV_PASS, child_environment
from gapscope.lean.process import ReplProcess
from gapscope.lean.sandbox import sandbox_argv
from gapscope.lean.screen import screen_code
from tests.environment import require_lean_sandbox
from tests.lean.conftest import FAKE_REPL

CANARY = "sk-canary-" + "9" * 24
DUMP = "import os, sys; sys.stdout.write(repr(dict(os.environ)))"


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)


def test_the_screen_refuses_include_str() -> None:
    code = 'example : (include_str "/proc/self/environ").length = 0 := by decide'
    found = screen_code(code)
    assert found is not None and found.command == "include_str"


def test_the_repl_process_does_not_inherit_an_api_key() -> None:
    repl = ReplProcess([sys.executable, str(FAKE_REPL)], env={"FAKE_REPL_LOG": ""})
    try:
        environ = Path(f"/proc/{repl.pid}/environ").read_bytes()
    finally:
        repl.kill()
    assert CANARY.encode() not in environ
    assert b"PATH=" in environ  # the toolchain can still be found


def test_comparator_runs_do_not_inherit_an_api_key(tmp_path: Path) -> None:
    done = run_bounded([sys.executable, "-c", DUMP], tmp_path, 30.0, {"COMPARATOR_LANDRUN": "x"})
    assert done.code == 0 and "COMPARATOR_LANDRUN" in done.output
    assert CANARY not in done.output


def test_the_sandbox_clears_the_environment_it_was_started_with(tmp_path: Path) -> None:
    require_lean_sandbox()
    # started with the full environment, as a caller that forgot the allow-list would
    done = subprocess.run(
        sandbox_argv(["cat", "/proc/self/environ"], tmp_path),
        env=dict(os.environ),
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert CANARY.encode() not in done.stdout and b"PATH=" in done.stdout


def test_named_variables_pass_through_on_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_TOOLCHAIN_KNOB", "on")
    assert "MY_TOOLCHAIN_KNOB" not in child_environment()
    monkeypatch.setenv(ENV_PASS, "OTHER, MY_TOOLCHAIN_*")
    assert child_environment()["MY_TOOLCHAIN_KNOB"] == "on"
    assert "OPENAI_API_KEY" not in child_environment()
