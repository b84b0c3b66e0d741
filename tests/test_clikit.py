"""The command skeleton: exit codes, the JSON envelope, Ctrl-C, bad paths and models."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path
from typing import Annotated

import typer
from inspect_ai import Task
from inspect_ai.dataset import Sample
from inspect_ai.solver import Generate, Solver, TaskState, solver
from typer.testing import CliRunner

from gapscope.analysis.view import View
from gapscope.app.kit import run_diagnostic

runner = CliRunner(env={"COLUMNS": "400"})  # rich must not wrap the messages


@solver
def ctrl_c_on_second_sample() -> Solver:
    """What a user's Ctrl-C does mid-run: SIGINT while samples are in flight."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if state.sample_id == 2:
            os.kill(os.getpid(), signal.SIGINT)
        await asyncio.sleep(5)
        return state

    return solve


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.command()
    def run(
        log_dir: Path,
        json_out: Annotated[bool, typer.Option("--json")] = False,
    ) -> None:
        def build() -> Task:
            print("chatter that must not reach stdout in --json mode")
            samples = [Sample(id=i, input="x") for i in (1, 2, 3)]
            return Task(dataset=samples, solver=ctrl_c_on_second_sample())

        run_diagnostic(
            "run test",
            json_out,
            build,
            lambda log: View(),
            model="none",
            log_dir=log_dir,
            display="none",
        )

    @app.command()
    def other() -> None:  # a second command keeps `run` a named sub-command
        """Unused."""

    return app


def test_ctrl_c_exits_130_with_the_resume_line(tmp_path: Path) -> None:
    """Regression (issue 10, #7): an IndexError traceback instead of a message and exit 130."""
    result = runner.invoke(_app(), ["run", str(tmp_path)])
    assert result.exit_code == 130, result.output
    assert not isinstance(result.exception, IndexError)
    (log,) = tmp_path.glob("*.eval")
    assert (
        f"interrupted: {log} did not finish; rerun the same command to resume it" in result.output
    )
    assert f"or inspect eval-retry {log}" in result.output


def test_ctrl_c_json_envelope_names_the_log(tmp_path: Path) -> None:
    result = runner.invoke(_app(), ["run", str(tmp_path), "--json"])
    assert result.exit_code == 130
    envelope = json.loads(result.stdout)  # nothing but the envelope on stdout
    (log,) = tmp_path.glob("*.eval")
    assert envelope["status"] == "interrupted" and envelope["logs"] == [str(log)]
    assert envelope["details"] == {"resume": f"inspect eval-retry {log}"}


def test_log_dir_that_is_a_file_is_bad_input(tmp_path: Path) -> None:
    """Regression (issue 10, #12): a non-directory --log-dir gave a traceback."""
    from gapscope.app.main import app

    blocker = tmp_path / "logs"
    blocker.write_text("not a directory")
    for log_dir in (blocker, blocker / "sub"):
        args = ["run", "s2b", "--preset", "demo", "--seeds", "1", "--listener", "rule"]
        result = runner.invoke(app, [*args, "--log-dir", str(log_dir)])
        assert result.exit_code == 2, result.output
        assert "is not a directory" in result.output


def test_onng_render_out_that_is_a_file_is_bad_input(tmp_path: Path) -> None:
    from gapscope.app.main import app

    blocker = tmp_path / "out"
    blocker.write_text("x")
    result = runner.invoke(app, ["onng", "render", "--out", str(blocker)])
    assert result.exit_code == 2 and "is not a directory" in result.output


def test_missing_local_checkpoint_is_bad_input_in_the_envelope(tmp_path: Path) -> None:
    """Regression (issue 10, #12): `gapscope/hf//nonexistent` ended in a CheckpointError
    traceback."""
    from gapscope.app.main import app

    missing = tmp_path / "missing"  # made here: a fixed path may exist on some machine
    args = ["run", "s2b", "--preset", "demo", "--seeds", "1", "--json", "--log-dir", str(tmp_path)]
    result = runner.invoke(app, [*args, "--model", f"gapscope/hf/{missing}"])
    assert result.exit_code == 2
    envelope = json.loads(result.stdout)
    assert envelope["status"] == "bad_input"
    assert f"--model gapscope/hf/{missing}" in envelope["error"]
    assert f"'{missing}' does not exist" in envelope["error"]
    assert not list(tmp_path.glob("*.eval"))  # stopped before a run started


def _python(code: str) -> str:
    """Run ``code`` in a fresh interpreter (start-up and exit are what is tested)."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return done.stdout.strip()


def test_cli_start_up_imports_no_heavy_library() -> None:
    """`gapscope --help` took 5 s because Inspect and scipy.stats loaded at start-up."""
    code = (
        "import sys; from gapscope.app.main import app; "
        "print(sorted(m for m in ('inspect_ai', 'scipy.stats', 'torch', 'matplotlib') "
        "if m in sys.modules))"
    )
    assert _python(code) == "[]"


def test_every_command_ends_with_the_heap_frozen() -> None:
    """Ctrl-C on an embedded run took 1.9 s to exit, 1.3 s of it the interpreter's shutdown
    collection walking torch's and Inspect's objects; a frozen heap is skipped by it. Checked
    for an ending by SystemExit, as every Typer command (and the interrupt path) ends."""
    code = (
        "import gc, sys; from gapscope.app.main import main; sys.argv = ['gapscope', '--help']\n"
        "try:\n    main()\nexcept SystemExit as exc:\n"
        "    print(exc.code, gc.get_freeze_count() > 0)"
    )
    assert _python(code).splitlines()[-1] == "0 True"


def test_the_installed_command_goes_through_main() -> None:
    """The console script called the bare Typer app, so a user's `gapscope` missed the freeze."""
    from importlib.metadata import entry_points

    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "gapscope"]
    assert script.value == "gapscope.app.main:main"


def test_server_model_errors_stay_off_stdout_and_lose_their_markup(tmp_path: Path) -> None:
    """Inspect prints a provider's error (missing key or package) itself; with --json only the
    envelope may reach stdout."""
    from gapscope.app.main import app

    args = ["run", "s2b", "--preset", "demo", "--seeds", "1", "--json", "--log-dir", str(tmp_path)]
    result = CliRunner(env={"VLLM_API_KEY": None, "VLLM_BASE_URL": None}).invoke(
        app, [*args, "--model", "openai-api/vllm/some-model"]
    )
    assert result.exit_code == 2
    envelope = json.loads(result.stdout)
    assert envelope["status"] == "bad_input"
    assert envelope["error"].startswith("--model openai-api/vllm/some-model: cannot open it:")
    assert "[bold]" not in envelope["error"]


def test_a_run_ended_by_inspects_retry_loop_names_what_the_server_said() -> None:
    """Inspect records ``RetryError(<Future ...>)`` when its retries give up: the line shown to
    the user is the wrapped exception, with the server's words."""
    from gapscope.app.kit import run_error_text

    traceback = (
        "Traceback (most recent call last):\n"
        '  File "x.py", line 1, in f\n'
        "openai.InternalServerError: stub overloaded: no capacity\n\n"
        "The above exception was the direct cause of the following exception:\n\n"
        "Traceback (most recent call last):\n"
        '  File "y.py", line 2, in g\n'
        "tenacity.RetryError: RetryError[<Future at 0x1 state=finished raised X>]\n"
    )
    text = run_error_text("RetryError(<Future at 0x1 state=finished raised X>)", traceback)
    assert text == "openai.InternalServerError: stub overloaded: no capacity"
    assert run_error_text("plain failure", traceback) == "plain failure"
