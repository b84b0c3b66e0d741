"""Without bubblewrap, the Lean-backed runs stop before asking the model anything, and say
what to install (issue 17: the local REPL used to run the model's code unsandboxed)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gapscope.app.main import app
from gapscope.lean import sandbox
from gapscope.lean.sandbox import SandboxStatus
from gapscope.models.scripted import REQUESTS, script
from tests.lean.conftest import FAKE_REPL, FAKE_TOOLCHAIN

DATA = Path(__file__).parents[1] / "t2" / "fixtures" / "records.jsonl"


def _minif2f(tmp_path: Path) -> Path:
    path = tmp_path / "mini.jsonl"
    row = {
        "name": "aime_a",
        "split": "test",
        "header": "import Mathlib\n\n",
        "formal_statement": "theorem aime_a : 1 + 1 = 2 := by",
    }
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("command", ["prove", "onng", "t2"])
def test_a_local_backend_without_bubblewrap_stops_before_any_model_call(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox, "sandbox_status", lambda: SandboxStatus(False, "no bwrap"))
    monkeypatch.setenv("GAPSCOPE_LEAN_REPL_CMD", f"{sys.executable} {FAKE_REPL}")
    project = tmp_path / "project"
    project.mkdir()
    (project / "lean-toolchain").write_text(FAKE_TOOLCHAIN + "\n", encoding="utf-8")
    model = script(f"fail-closed-{command}", lambda messages: "```lean4\nrfl\n```")
    extra = {
        "prove": ["--dataset", str(_minif2f(tmp_path))],
        "onng": [],
        "t2": ["--data", str(shutil.copy(DATA, tmp_path / "records.jsonl"))],
    }[command]
    args = ["run", command, "--model", model, "--lean", f"local:{project}", *extra]
    result = CliRunner().invoke(app, [*args, "--log-dir", str(tmp_path / "logs"), "--json"])
    assert result.exit_code == 2, result.output
    envelope = json.loads(result.stdout)
    assert envelope["status"] == "bad_input"
    assert "apt-get install bubblewrap" in envelope["error"]
    assert not REQUESTS[f"fail-closed-{command}"]  # the model was never asked
    assert not list((tmp_path / "logs").glob("*.eval"))  # no run started
