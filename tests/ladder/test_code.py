"""The code pilot: problems and loaders, the sandbox's limits, and the task end to end."""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log
from inspect_ai.model import ChatMessage
from typer.testing import CliRunner

from gapscope.analysis.diagnostics import load
from gapscope.app.main import app
from gapscope.ladder import sandbox
from gapscope.ladder.code import (
    CodeCondition,
    check_helpers,
    code_prompt,
    extract_program,
    load_bundled_code,
    load_code_problems,
)
from gapscope.ladder.code_task import parse_code_conditions
from gapscope.ladder.sandbox import CodeTest, Isolation, Limits, Status, bwrap_status, run_tests
from gapscope.models.scripted import script
from tests.environment import require_code_sandbox

LAYERS = [Isolation.UNSANDBOXED, Isolation.BWRAP]
ADD = [CodeTest([1, 2], 3), CodeTest([2, 2], 4)]
# each one misbehaves as soon as it runs, whatever function the tests then call
INFINITE_LOOP = "while True:\n    pass\n"
FORK_BOMB = "import os\n\nwhile True:\n    os.fork()\n"
TEN_GB = "block = bytearray(10 * 1024**3)\n"


@pytest.fixture(params=LAYERS)
def layer(request: pytest.FixtureRequest) -> Isolation:
    """Each layer the attempts can run in; bubblewrap's tests skip where it does not work
    (decided when the test runs, not at import)."""
    chosen = Isolation(request.param)
    if chosen is Isolation.BWRAP:
        require_code_sandbox()
    return chosen


def test_the_bundled_problems_pass_their_tests_and_their_helpers_theirs(
    layer: Isolation,
) -> None:
    loaded = load_bundled_code()
    assert len(loaded.problems) == 10 and not loaded.skipped
    assert {p.entry is None for p in loaded.problems} == {True, False}  # stdin and call tests
    for problem in loaded.problems:
        assert problem.reference_solution is not None and problem.helpers
        result = run_tests(problem.reference_solution, problem.tests, problem.entry, layer=layer)
        assert result.status is Status.PASSED, (problem.pid, result)
        assert result.passed == len(problem.tests) >= 5
        assert all(r.solved for _, r in check_helpers(problem, layer=layer)), problem.pid


def test_each_condition_shows_what_it_promises() -> None:
    problem = load_bundled_code().problems[0]
    helper = problem.helpers[0]
    bare, plan, helped = (code_prompt(problem, c) for c in CodeCondition)
    assert problem.statement in bare and helper.signature not in bare
    assert helper.signature in plan and helper.description in plan and helper.code not in plan
    assert helper.code.strip() in helped
    assert extract_program("x\n```python\nprint(1)\n```\nthen\n```\nprint(2)\n```") == "print(2)\n"
    assert extract_program("print(1)") is None
    assert parse_code_conditions("no-help") == (CodeCondition.NO_HELP,)
    with pytest.raises(ValueError, match="unknown condition"):
        parse_code_conditions("oracle")


def test_livecodebench_records_load_and_run(tmp_path: Path) -> None:
    functional = {
        "question_id": "lcb-1",
        "question_title": "Add",
        "question_content": "Return a + b.",
        "starter_code": "class Solution:\n    def add(self, a: int, b: int) -> int:\n",
        "public_test_cases": json.dumps(
            [{"input": "1\n2", "output": "3", "testtype": "functional"}]
        ),
        "private_test_cases": json.dumps(
            [{"input": "-4\n4", "output": "0", "testtype": "functional"}]
        ),
        "metadata": json.dumps({"func_name": "add"}),
    }
    stdin = {
        "question_id": "lcb-2",
        "question_content": "Print twice the number read.",
        "public_test_cases": [{"input": "21\n", "output": "42\n", "testtype": "stdin"}],
    }
    pickled = stdin | {"question_id": "lcb-3", "private_test_cases": "eJzLSM3JyVcozy/KSQEAGgQEXQ=="}
    path = tmp_path / "lcb.jsonl"
    ours = {"pid": "ours-1", "tests": [{"input": "", "output": ""}]}  # no statement
    records = (functional, stdin, pickled, ours)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    loaded = load_code_problems(path)
    add, double = loaded.problems
    assert (add.pid, add.entry, add.statement) == ("lcb-1", "add", "Add\n\nReturn a + b.")
    assert add.tests == (CodeTest([1, 2], 3), CodeTest([-4, 4], 0))
    assert double.entry is None and double.tests == (CodeTest("21\n", "42\n"),)
    pickled_problem, no_statement = loaded.skipped
    assert (pickled_problem.line, pickled_problem.record) == (3, "lcb-3")
    assert "not plain JSON" in pickled_problem.message
    assert str(no_statement) == "line 4 (ours-1): statement: missing"
    method = "class Solution:\n    def add(self, a, b):\n        return a + b\n"
    unsandboxed = Isolation.UNSANDBOXED  # what is tested here is the loading
    assert run_tests(method, add.tests, add.entry, layer=unsandboxed).solved
    assert run_tests("print(2 * int(input()))", double.tests, None, layer=unsandboxed).solved


def test_the_sandbox_stops_a_loop_a_fork_bomb_and_ten_gigabytes(layer: Isolation) -> None:
    limits = Limits(time_s=2.0, memory_mb=512)
    loop = run_tests(INFINITE_LOOP, ADD, "add", limits, layer)
    assert loop.status is Status.TIMEOUT and loop.detail == "killed after 2 s of wall-clock time"
    bomb = run_tests(FORK_BOMB, ADD, "add", limits, layer)
    assert bomb.status is Status.BLOCKED and "os.fork" in bomb.detail
    memory = run_tests(TEN_GB, ADD, "add", limits, layer)
    assert memory.status is Status.MEMORY and not memory.solved
    assert {loop.isolation, bomb.isolation, memory.isolation} == {layer}
    assert run_tests("def add(a, b):\n    return a + b\n", ADD, "add", limits, layer).solved


def test_the_sandbox_refuses_the_network_and_writes_outside(layer: Isolation) -> None:
    network = "import socket\nsocket.create_connection(('192.0.2.1', 80), timeout=1)\n"
    outside = f"open({str(Path.home() / 'gapscope-sandbox-escape')!r}, 'w')\n"
    child = "import subprocess\nsubprocess.run(['true'])\n"
    for program in (network, outside, child):
        result = run_tests(program, [CodeTest("", "")], None, Limits(time_s=5.0), layer)
        assert result.status is Status.BLOCKED, (program, result)
    assert not (Path.home() / "gapscope-sandbox-escape").exists()
    wrong = run_tests("print(41)", [CodeTest("", "42")], None, layer=layer)
    assert (wrong.status, wrong.passed) == (Status.FAILED, 0)
    a_set = run_tests("def f():\n    return {1}\n", [CodeTest([], [1])], "f", layer=layer)
    assert a_set.status is Status.FAILED  # a value JSON cannot carry is a wrong answer


def test_the_attempt_finds_no_expected_output_to_copy(layer: Isolation) -> None:
    snoop = (
        "import os\n"
        "texts = [open(f, errors='ignore').read() for f in os.listdir('.') if os.path.isfile(f)]\n"
        "texts.append(open('/proc/self/fd/0', errors='ignore').read())\n"
        "print('secret-4242' if any('secret-4242' in t for t in texts) else 'not found')\n"
    )
    result = run_tests(snoop, [CodeTest("", "secret-4242")], None, layer=layer)
    assert result.status is Status.FAILED, result


def test_bwrap_runs_a_sandbox_program_installed_below_tmp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_code_sandbox()
    # a checkout or virtualenv under /tmp: the sandbox's own program must stay visible
    child = tmp_path / "sandbox_child.py"
    shutil.copy(sandbox.CHILD, child)
    monkeypatch.setattr(sandbox, "CHILD", child)
    assert run_tests("def add(a, b):\n    return a + b\n", ADD, "add", layer=Isolation.BWRAP).solved


def _processes_running(marker: str) -> Iterator[int]:
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if marker.encode() in cmdline:
            yield int(pid)


def test_a_timeout_kills_the_whole_process_group() -> None:
    # processes allowed (never for a model): a child outlives nothing once the group is killed
    marker = "987.654"
    program = (
        "import os, time\n"
        f"if os.fork() == 0:\n    os.execv('/bin/sleep', ['sleep', '{marker}'])\n"
        "while True:\n    time.sleep(0.01)\n"
    )
    limits = Limits(time_s=1.5, allow_processes=True)
    result = run_tests(program, [CodeTest("", "")], None, limits, Isolation.UNSANDBOXED)
    assert result.status is Status.TIMEOUT
    assert list(_processes_running(f"sleep {marker}")) == []


def _pilot_model(name: str) -> str:
    """Three problems: verified helpers always pass (the model writes only the entry point),
    the helper plan passes on one attempt of two on problems 1 and 2, never on 3 (a loop, a
    fork bomb and 10 GB on the others), and without help the model gives no code."""
    problems = load_bundled_code().problems[:3]
    asked: Counter[str] = Counter()

    def main_part(index: int) -> str:
        problem = problems[index]
        main = problem.reference_solution or ""
        for helper in problem.helpers:
            main = main.replace(helper.code, "")
        return main.strip() + "\n"

    plan = {
        0: [problems[0].reference_solution, INFINITE_LOOP],
        1: [FORK_BOMB, problems[1].reference_solution],
        2: [TEN_GB, TEN_GB],
    }

    def reply(messages: list[ChatMessage]) -> str:
        text = messages[-1].text
        index = next(i for i, p in enumerate(problems) if p.statement in text)
        asked[text] += 1
        if "already defined" in text:
            return f"Using the helpers:\n```python\n{main_part(index)}```"
        if "A plan" in text:
            return f"```python\n{plan[index][asked[text] - 1]}\n```"
        return "I would need more time."

    return script(name, reply)


def test_run_ladder_code_reports_attempt_and_problem_rates(tmp_path: Path) -> None:
    args = ["run", "ladder-code", "--bundled", "--limit", "3", "-k", "2", "--time-limit", "2"]
    args += ["--model", _pilot_model("code-pilot"), "--log-dir", str(tmp_path), "--json"]
    sandboxed = bwrap_status().available  # the rates are the same either way
    args += [] if sandboxed else ["--allow-unsandboxed"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    envelope = json.loads(result.stdout)
    conditions = envelope["details"]["conditions"]
    assert conditions["no-help"]["attempt_rate"] == 0.0
    assert conditions["no-help"]["endings"] == {"no-code": 6}
    plan = conditions["helper-plan"]
    assert (plan["passed"], plan["attempts"], plan["problems_solved"]) == (2, 6, 2)
    assert plan["endings"] == {"blocked": 1, "memory": 2, "passed": 2, "timeout": 1}
    helped = conditions["verified-helpers"]
    assert (helped["attempt_rate"], helped["problems_solved"], helped["problems"]) == (1.0, 3, 3)
    rows = {r["metric"]: r["value"] for r in envelope["summary"]}
    assert rows["attempts passing helper-plan"] == pytest.approx(100 / 3)
    assert rows["problems solved verified-helpers"] == 100.0
    assert envelope["details"]["isolation"] == ("bwrap" if sandboxed else "unsandboxed")
    samples = read_eval_log(envelope["logs"][0]).samples or []
    ran = [s.scores["code_tests"].metadata for s in samples if s.scores]
    bounds = {m["bounds"] for m in ran if m is not None}  # None: no code, nothing ran
    assert len(bounds) == 1 and "2 s wall clock" in bounds.pop()  # every score says its limits
    loaded = load(Path(envelope["logs"][0]))  # what `gapscope report` reads
    assert loaded.summary.outcomes()["solved helper-plan"] == {
        p.pid: p.pid != load_bundled_code().problems[2].pid
        for p in load_bundled_code().problems[:3]
    }
    both = CliRunner().invoke(app, ["run", "ladder-code", "--bundled", "--problems", "x.jsonl"])
    assert both.exit_code == 2 and "exactly one of --problems F or --bundled" in both.output
