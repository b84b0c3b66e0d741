"""The expected outputs stay out of the sandbox wherever the interpreter's mounts reach them.

The adversary: a program that opens the problems file by its real path, finds the test
whose input it was given and prints that test's output. Where the file is readable it
passes every test; the sandbox must make it fail. Each case puts the answers under a folder
the sandbox binds (a venv made with ``--copies``, a checkout under a system folder), where
hiding only the base installation's site-packages left them readable.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import gapscope
from gapscope.ladder import sandbox
from gapscope.ladder.code_task import ladder_code
from gapscope.ladder.sandbox import CodeTest, Limits, Status, run_tests
from tests.environment import require_code_sandbox

BUNDLED = Path(gapscope.__file__).resolve().parent / "ladder" / "data" / "code_pilot.jsonl"
TESTS = [CodeTest("21\n", "42\n"), CodeTest("1\n", "2\n")]


def _cheat(answers: Path) -> str:
    """Prints the output the answers file gives for this stdin (or nothing)."""
    return f"""
import json, sys
given = sys.stdin.read()
for line in open({str(answers)!r}):
    for test in json.loads(line)["tests"]:
        if test["input"] == given:
            print(test["output"], end="")
            raise SystemExit
"""


def _answers(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tests = [{"input": t.input, "output": t.output} for t in TESTS]
    path.write_text(json.dumps({"tests": tests}) + "\n")
    return path


@pytest.fixture
def copies_venv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This process as if run from a venv made with ``--copies`` in ``tmp_path``: its
    interpreter is a copy, so the sandbox binds the venv whole."""
    require_code_sandbox()
    venv = tmp_path / "venv"
    base = Path(sys.base_prefix) / "bin" / Path(sys.executable).name
    interpreter = base if base.exists() else Path(sys.executable)
    subprocess.run(
        [str(interpreter), "-m", "venv", "--copies", "--without-pip", str(venv)], check=True
    )
    python = venv / "bin" / "python"
    assert not python.is_symlink()
    monkeypatch.setattr(sys, "executable", str(python))
    monkeypatch.setattr(sys, "prefix", str(venv))
    monkeypatch.setattr(sys, "exec_prefix", str(venv))
    return venv


def test_the_answers_in_a_copies_venvs_site_packages_are_unreadable(copies_venv: Path) -> None:
    purelib = copies_venv / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    answers = _answers(purelib / "site-packages" / "gapscope" / "data" / "problems.jsonl")
    result = run_tests(_cheat(answers), TESTS, None, Limits(time_s=5.0))
    assert result.sandboxed and result.passed == 0, result
    assert result.status is not Status.PASSED and "No such file" in result.detail


def test_a_problems_file_inside_a_bound_folder_is_unreadable(copies_venv: Path) -> None:
    answers = _answers(copies_venv / "share" / "problems" / "mine.jsonl")
    shown = run_tests(_cheat(answers), TESTS, None, Limits(time_s=5.0))
    assert shown.status is Status.PASSED, shown  # the cheat works where the file shows
    limits = Limits(time_s=5.0, hidden=(str(answers),))
    result = run_tests(_cheat(answers), TESTS, None, limits)
    assert result.sandboxed and result.passed == 0, result
    assert result.status is not Status.PASSED and "No such file" in result.detail


def test_the_bundled_problems_are_unreadable_from_a_checkout_under_a_system_folder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A checkout (or install) under a bound folder: the package's data, by its real path."""
    require_code_sandbox()
    checkout = str(BUNDLED.parents[3])
    monkeypatch.setattr(sandbox, "SYSTEM_FOLDERS", (*sandbox.SYSTEM_FOLDERS, checkout))
    monkeypatch.setattr(sys, "path", [p for p in sys.path if not p.startswith(checkout)])
    problem = json.loads(BUNDLED.read_text().splitlines()[0])
    tests = [CodeTest(t["input"], t["output"]) for t in problem["tests"]]
    cheat = f"""
import json
def {problem["entry"]}(*args):
    for line in open({str(BUNDLED)!r}):
        for test in json.loads(line)["tests"]:
            if test["input"] == list(args):
                return test["output"]
"""
    result = run_tests(cheat, tests, problem["entry"], Limits(time_s=5.0))
    assert result.sandboxed and result.status is not Status.PASSED, result
    assert result.passed == 0


def test_the_pilot_hides_the_problems_file_it_was_given(tmp_path: Path) -> None:
    require_code_sandbox()
    problems = tmp_path / "problems.jsonl"
    problems.write_text(BUNDLED.read_text().splitlines()[0] + "\n")
    task = ladder_code(problems=str(problems), k=1, conditions="no-help")
    assert task.metadata is not None
    assert list(task.metadata["limits"]["hidden"]) == [str(problems.resolve())]
