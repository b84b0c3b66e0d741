"""The code pilot with the model as adversary: no faked pass, no escape, no secret in the log.

Each program here is what a hostile model can send. The fake passes work on the judge (they
need no sandbox to fail); the escapes are tried under bubblewrap, and those tests skip, with
the reason, where bubblewrap does not work (decided when they run).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from inspect_ai.model import ChatMessage
from typer.testing import CliRunner

from gapscope import lean
from gapscope.app.main import app
from gapscope.ladder import sandbox
from gapscope.ladder.code import load_bundled_code
from gapscope.ladder.sandbox import CodeTest, Isolation, Limits, Status, run_tests
from gapscope.lean.cgroup import cgroup_support
from gapscope.lean.sandbox import SandboxStatus
from gapscope.models.scripted import REQUESTS, script
from tests.environment import require_attempt_cgroup, require_code_sandbox
from tests.ladder.test_code import _processes_running

SRC = Path(__file__).resolve().parents[2] / "src"
ADD = [CodeTest([1, 2], 3), CodeTest([2, 2], 4)]
STDIN = [CodeTest("21\n", "42\n"), CodeTest("1\n", "2\n")]

REBIND = """
import __main__
__main__.lines = lambda text: []
__main__.plain = lambda value: 0
def add(*args):
    return 0
print(0)
"""
"""Rebinds the comparison functions of the process it runs in."""

READ_CALLER = """
import sys
def expected():
    frame = sys._getframe(1)
    while frame is not None:
        test = frame.f_locals.get('test')
        if isinstance(test, dict) and 'output' in test:
            return test['output']
        frame = frame.f_back
    return None
def add(*args):
    return expected()
if __name__ == '__main__':
    print(expected())
"""
"""Reads the expected output from the frame of whatever called it."""

FORGE_RESULT = """
import json, os, sys
verdict = {"status": "passed", "passed": 99, "detail": ""}
frame = sys._getframe()
while frame is not None:
    for value in list(frame.f_locals.values()):
        if isinstance(value, dict) and isinstance(value.get('result'), str):
            with open(value['result'], 'w') as handle:
                json.dump(verdict, handle)
    frame = frame.f_back
for fd in range(3, 64):  # and claim a pass on every descriptor it holds
    for line in (b'{"i": 0, "end": "passed"}\\n', b'{"status": "passed", "passed": 99}\\n'):
        try:
            os.write(fd, line)
        except OSError:
            pass
os._exit(0)
"""
"""Writes a passing verdict wherever it can, then leaves without running a test."""

FAKE_PASSES = {"rebind": REBIND, "read-caller": READ_CALLER, "forge-result": FORGE_RESULT}


@pytest.fixture(params=[Isolation.UNSANDBOXED, Isolation.BWRAP])
def layer(request: pytest.FixtureRequest) -> Isolation:
    if request.param is Isolation.BWRAP:
        require_code_sandbox()
    return Isolation(request.param)


@pytest.mark.parametrize("name", sorted(FAKE_PASSES))
def test_a_program_that_fakes_a_pass_fails(name: str, layer: Isolation) -> None:
    program = FAKE_PASSES[name]
    for tests, entry in ((ADD, "add"), (STDIN, None)):
        result = run_tests(program, tests, entry, Limits(time_s=5.0), layer)
        assert not result.solved and result.passed == 0, (name, entry, result)
        assert result.status in {Status.FAILED, Status.ERROR}, result


def test_the_child_is_told_no_expected_output(layer: Isolation) -> None:
    dump = "import sys\nprint(repr([f.f_locals for f in [sys._getframe(1), sys._getframe(2)]]))"
    secret = "expected-only-9931"
    result = run_tests(dump, [CodeTest("", secret)], None, Limits(time_s=5.0), layer)
    assert result.status is Status.FAILED
    # and the same program, judged on what it printed, passes only when that is the answer
    assert run_tests("print('ok')", [CodeTest("", "ok\n")], None, layer=layer).solved


def _fork_exec(shell: str) -> str:
    """A program that starts ``sh -c shell`` in a new session through ``_posixsubprocess``
    loaded under another name (the audit hook knows only the real name), then loops."""
    return f"""
import glob, importlib.util, os, sys, time
so = glob.glob(os.path.join(os.path.dirname(os.__file__), 'lib-dynload', '_posixsubprocess*'))
if so:
    spec = importlib.util.spec_from_file_location('x._posixsubprocess', so[0])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
else:
    module = sys.modules.get('_posixsubprocess')
read, write = os.pipe()
module.fork_exec(
    [b'/bin/sh', b'-c', {shell.encode()!r}], [b'/bin/sh'], True, (), None, None,
    -1, -1, -1, -1, -1, -1, read, write, True, True, -1, None, None, None, -1, None, False,
)
while True:
    time.sleep(0.05)
"""


def _shell_output(shell: str) -> str:
    """A program that runs ``sh -c shell`` through the renamed ``_posixsubprocess`` (past the
    audit hook, as a hostile attempt would) and prints what the shell printed."""
    return f"""
import glob, importlib.util, os
so = glob.glob(os.path.join(os.path.dirname(os.__file__), 'lib-dynload', '_posixsubprocess*'))
spec = importlib.util.spec_from_file_location('x._posixsubprocess', so[0])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
read, write = os.pipe()
out_read, out_write = os.pipe()
module.fork_exec(
    [b'/bin/sh', b'-c', {shell.encode()!r}], [b'/bin/sh'], True, (), None, None,
    -1, -1, -1, out_write, -1, -1, read, write, True, False, -1, None, None, None, -1, None, False,
)
os.close(out_write)
chunks = []
while data := os.read(out_read, 65536):
    chunks.append(data)
print(b''.join(chunks).decode(), end='')
"""


def test_an_attempt_is_held_to_its_memory_limit_with_all_its_children() -> None:
    """Four children of 400 MB each: each is under the 1,024 MB address-space limit of one
    process, together they pass the attempt's, and the attempt is killed naming it."""
    require_code_sandbox()
    require_attempt_cgroup()
    python = os.path.realpath(sys.executable)
    child = f"{python} -I -S -c 'import time; x = bytearray(b\"1\") * (400 << 20); time.sleep(60)'"
    shell = " & ".join([child] * 4) + " & wait"
    started = time.monotonic()
    result = run_tests(_fork_exec(shell), [CodeTest("", "")], None, Limits(time_s=30.0))
    assert result.status is Status.MEMORY, result
    assert "memory limit of 1024 MB (all its processes together" in result.detail
    assert time.monotonic() - started < 25  # stopped at the kill, not at the wall clock
    assert result.bounds.startswith("per attempt (cgroup v") and "memory 1024 MB" in result.bounds
    assert list(_processes_running("time.sleep(60)")) == []


def test_dev_cannot_take_100_mb() -> None:
    """bubblewrap's private /dev is a tmpfs of half the host's memory: read-only here."""
    require_code_sandbox()
    fill = "dd if=/dev/zero of={} bs=1M count=100 2>/dev/null && echo wrote || echo refused"
    shell = "; ".join(fill.format(path) for path in ("/dev/fill", "/dev/shm/fill"))
    shell += "; echo done > /dev/null && echo devnull"
    # the answer is what an attempt that could write neither prints (/dev/null still works)
    expected = "refused\nrefused\ndevnull\n"
    result = run_tests(_shell_output(shell), [CodeTest("", expected)], None, Limits(time_s=20.0))
    assert result.solved, result
    assert "/dev read-only" in result.bounds


def test_a_renamed_fork_exec_and_its_setsid_children_die_with_the_attempt(tmp_path: Path) -> None:
    require_code_sandbox()
    marker = "987.123"
    outside = tmp_path / "escaped"
    shell = (
        f"id > {outside}; sleep {marker} & setsid sh -c 'sleep {marker}; touch {outside}' & "
        f"(setsid sleep {marker} &) ; sleep {marker}"
    )
    result = run_tests(_fork_exec(shell), [CodeTest("", "")], None, Limits(time_s=1.5))
    assert result.status is Status.TIMEOUT, result
    # nothing outlives the attempt's report
    assert list(_processes_running(f"sleep {marker}")) == []
    time.sleep(0.2)
    assert not outside.exists()


def test_a_root_attempt_cannot_remount_its_read_only_view_writable(tmp_path: Path) -> None:
    require_code_sandbox()
    outside = tmp_path / "remounted"
    shell = (
        "for m in / /usr /tmp; do mount -o remount,rw,bind $m; done 2>/dev/null; "
        f"touch {outside} /usr/gapscope-escape 2>/dev/null; sleep 60"
    )
    result = run_tests(_fork_exec(shell), [CodeTest("", "")], None, Limits(time_s=1.5))
    assert result.status is Status.TIMEOUT
    assert not outside.exists() and not Path("/usr/gapscope-escape").exists()


def test_dir_fd_writes_renames_and_unlinks_stay_inside(tmp_path: Path) -> None:
    require_code_sandbox()
    for name in ("victim", "victim2"):
        (tmp_path / name).write_text("keep")
    program = f"""
import os
for step in (
    lambda d: os.write(os.open('written', os.O_WRONLY | os.O_CREAT, dir_fd=d), b'x'),
    lambda d: os.rename('victim', 'moved', src_dir_fd=d, dst_dir_fd=d),
    lambda d: os.mkdir('made', dir_fd=d),
    lambda d: os.unlink('victim2', dir_fd=d),
):
    for folder in ({str(tmp_path)!r}, '/', '/usr'):
        try:
            step(os.open(folder, os.O_RDONLY))
        except OSError:
            pass
print('done')
"""
    result = run_tests(program, [CodeTest("", "done")], None, Limits(time_s=5.0))
    assert result.solved, result  # it ran to the end; its writes went nowhere
    assert sorted(p.name for p in tmp_path.iterdir()) == ["victim", "victim2"]
    assert not any(Path("/", n).exists() for n in ("written", "moved", "made"))


def test_a_pidfd_signal_reaches_no_process_outside() -> None:
    require_code_sandbox()
    received: list[int] = []
    previous = signal.signal(signal.SIGUSR1, lambda number, frame: received.append(number))
    program = """
import os, signal
pids = {os.getppid(), *(int(p) for p in os.listdir('/proc') if p.isdigit())} - {os.getpid()}
sent = 0
for pid in pids:
    try:
        signal.pidfd_send_signal(os.pidfd_open(pid), signal.SIGUSR1)
        sent += 1
    except OSError:
        pass
print('signalled')
"""
    try:
        result = run_tests(program, [CodeTest("", "signalled")], None, Limits(time_s=5.0))
        time.sleep(0.1)
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert result.solved, result
    assert received == []  # neither this process nor anything it can see outside


SNOOP = """
import os
found = []
for pid in os.listdir('/proc'):
    try:
        found.append(open(f'/proc/{pid}/environ', 'rb').read().decode('utf-8', 'replace'))
    except OSError:
        pass
found.append(repr(dict(os.environ)))
hits = [t[t.find('sk-canary'):][:40] for t in found if 'sk-canary' in t]
raise RuntimeError(f'looked in {len(found)} environments: {hits}')
"""


def _everything_in(log: Path) -> bytes:
    with zipfile.ZipFile(log) as archive:
        return b"".join(archive.read(name) for name in archive.namelist())


CANARY_RUN = """
import sys
from gapscope.models.scripted import script
from gapscope.app.main import app
model = script("code-snoop", lambda messages: "```python\\n" + sys.argv[2] + "\\n```")
app(["run", "ladder-code", "--bundled", "--limit", "1", "-k", "1", "--time-limit", "5",
     "--conditions", "no-help", "--model", model, "--log-dir", sys.argv[1], "--json"])
"""


INTERRUPTED_RUN = """
import sys
from gapscope.models.scripted import script
from gapscope.app.main import app
model = script("code-interrupted", lambda messages: "```python\\n" + sys.argv[2] + "\\n```")
app(["run", "ladder-code", "--bundled", "--limit", "1", "-k", "2", "--time-limit", "50",
     "--conditions", "no-help", "--model", model, "--log-dir", sys.argv[1]])
"""


def _sleeping(marker: str) -> list[int]:
    """The ``sleep MARKER`` processes running (not the commands that name the marker)."""
    found = []
    for pid in _processes_running(f"sleep {marker}"):
        with contextlib.suppress(OSError):  # gone meanwhile
            if Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"sleep\0"):
                found.append(pid)
    return found


def test_ctrl_c_kills_the_attempts_in_flight_and_exits_130_at_once(tmp_path: Path) -> None:
    """Two attempts that would run for their 50 s each: a user's Ctrl-C ends the run within
    5 s (it waited for every attempt's time limit) and leaves none of their processes."""
    require_code_sandbox()
    marker = f"{os.getpid()}.{time.monotonic_ns() % 10**6}"
    process = subprocess.Popen(
        [sys.executable, "-c", INTERRUPTED_RUN, str(tmp_path), _fork_exec(f"sleep {marker}")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # a foreground job
    )
    deadline = time.monotonic() + 120
    while len(_sleeping(marker)) < 2 and time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        time.sleep(0.1)
    assert len(_sleeping(marker)) == 2  # both attempts under way
    process.send_signal(signal.SIGINT)
    interrupted = time.monotonic()
    try:
        _, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 130, err[-2000:]
    assert time.monotonic() - interrupted < 5.0
    assert _sleeping(marker) == []
    assert "Traceback" not in err


def test_an_api_key_in_the_parent_environment_reaches_no_log(tmp_path: Path) -> None:
    require_code_sandbox()
    canary = "sk-canary-" + "7" * 24
    # the key must be in the evaluating process's own start-up environment, as a user's is
    # (/proc/PID/environ shows that one, not later changes to os.environ)
    env = {**os.environ, "OPENAI_API_KEY": canary, "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-c", CANARY_RUN, str(tmp_path), SNOOP],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    envelope = json.loads(done.stdout)
    assert envelope["details"]["conditions"]["no-help"]["endings"] == {"error": 1}
    (log,) = envelope["logs"]
    content = _everything_in(Path(log))
    assert b"looked in" in content  # the attempt ran and its error text is in the log
    assert canary.encode() not in content and canary not in done.stdout + done.stderr


def _fakes_model(name: str) -> str:
    """Replies with the fake passes in turn, each given the problem's entry point."""
    problems = load_bundled_code().problems
    turn = {"n": 0}

    def reply(messages: list[ChatMessage]) -> str:
        problem = next(p for p in problems if p.statement in messages[-1].text)
        program = list(FAKE_PASSES.values())[turn["n"] % len(FAKE_PASSES)]
        turn["n"] += 1
        if problem.entry is not None:
            program = program.replace("def add(", f"def {problem.entry}(")
        return f"```python\n{program}\n```"

    return script(name, reply)


@pytest.mark.parametrize("sandboxed", [True, False])
def test_through_the_cli_the_fake_passes_solve_nothing(
    sandboxed: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if sandboxed:
        require_code_sandbox()
    else:
        missing = SandboxStatus(False, "bubblewrap (bwrap) not found")
        monkeypatch.setattr(sandbox, "bwrap_status", lambda: missing)
    args = ["run", "ladder-code", "--bundled", "--limit", "3", "-k", "1", "--time-limit", "5"]
    args += ["--model", _fakes_model("code-fakes"), "--log-dir", str(tmp_path), "--json"]
    args += [] if sandboxed else ["--allow-unsandboxed"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    conditions = json.loads(result.stdout)["details"]["conditions"]
    assert {c: r["passed"] for c, r in conditions.items()} == dict.fromkeys(conditions, 0)
    assert sum(r["attempts"] for r in conditions.values()) == 9


def test_without_bubblewrap_the_pilot_refuses_before_any_model_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    missing = SandboxStatus(False, "bubblewrap (bwrap) not found")
    monkeypatch.setattr(sandbox, "bwrap_status", lambda: missing)
    model = script("code-unsandboxed", lambda messages: "```python\nprint(1)\n```")
    args = ["run", "ladder-code", "--bundled", "--limit", "1", "-k", "1", "--time-limit", "5"]
    args += ["--model", model, "--log-dir", str(tmp_path), "--json"]
    refused = CliRunner().invoke(app, args)
    assert refused.exit_code == 2, refused.output
    error = json.loads(refused.stdout)["error"]
    assert "apt-get install bubblewrap" in error and "--allow-unsandboxed" in error
    assert REQUESTS["code-unsandboxed"] == [] and not list(tmp_path.iterdir())
    with caplog.at_level(logging.WARNING):
        allowed = CliRunner().invoke(app, [*args, "--allow-unsandboxed"])
    assert allowed.exit_code == 0, allowed.output
    assert REQUESTS["code-unsandboxed"] and "WITHOUT a sandbox" in caplog.text
    envelope = json.loads(allowed.stdout)
    assert envelope["details"]["isolation"] == "unsandboxed"
    with zipfile.ZipFile(envelope["logs"][0]) as archive:
        samples = [json.loads(archive.read(n)) for n in archive.namelist() if "samples/" in n]
    scores = [s for sample in samples for s in sample["scores"].values()]
    assert len(scores) == 3
    assert all(s["metadata"]["sandboxed"] is False for s in scores)
    assert all(s["metadata"]["isolation"] == "unsandboxed" for s in scores)


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        (" local", "lowercase and without spaces"),
        ("local ", "lowercase and without spaces"),
        ("LOCAL", "lowercase and without spaces"),
        ("Local:x.yaml", "lowercase and without spaces"),
        ("dockr", "SandboxEnvironment type 'dockr' not recognized"),
        ("local:missing.yaml", "no configuration file 'missing.yaml' here"),
    ],
)
def test_a_bad_sandbox_is_refused_before_any_model_call(
    spec: str, says: str, tmp_path: Path
) -> None:
    model = script(f"code-bad-sandbox-{spec}", lambda messages: "```python\nprint(1)\n```")
    args = ["run", "ladder-code", "--bundled", "--limit", "1", "-k", "1", "--sandbox", spec]
    args += ["--allow-unsandboxed", "--model", model, "--log-dir", str(tmp_path), "--json"]
    refused = CliRunner().invoke(app, args)
    assert refused.exit_code == 2, refused.output
    error = json.loads(refused.stdout)["error"]  # the --json envelope, not a traceback
    assert error.startswith(f"--sandbox {spec!r}: ") and says in error
    assert REQUESTS[f"code-bad-sandbox-{spec}"] == [] and not list(tmp_path.iterdir())


def test_attempts_run_in_an_inspect_sandbox_and_are_judged_here(tmp_path: Path) -> None:
    # Inspect's `local` sandbox (this host, unisolated: it needs --allow-unsandboxed) stands
    # in for docker/k8s: the same write_file/exec calls, the same verdicts.
    problem = load_bundled_code().problems[0]
    fake = REBIND.replace("def add(", f"def {problem.entry or 'add'}(")
    replies = iter([problem.reference_solution, fake, "while True:\n    pass\n"])
    model = script("code-inspect", lambda messages: f"```python\n{next(replies)}\n```")
    # 10 s: the loop must end on the limit, and the reference must pass even when the shared
    # machine is loaded (its tests take well under a second idle; a 2 s limit failed under load)
    args = ["run", "ladder-code", "--bundled", "--limit", "1", "-k", "3", "--time-limit", "10"]
    args += ["--conditions", "no-help", "--sandbox", "local", "--model", model]
    args += ["--log-dir", str(tmp_path), "--json"]
    refused = CliRunner().invoke(app, args)
    assert refused.exit_code == 2 and "Inspect's 'local' sandbox" in refused.stdout
    assert REQUESTS["code-inspect"] == []
    result = CliRunner().invoke(app, [*args, "--allow-unsandboxed"])
    assert result.exit_code == 0, result.output
    envelope = json.loads(result.stdout)
    assert envelope["details"]["isolation"] == "inspect-local"
    no_help = envelope["details"]["conditions"]["no-help"]
    assert no_help["endings"] == {"failed": 1, "passed": 1, "timeout": 1}


def test_doctor_says_what_isolation_the_code_pilot_has(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "bwrap_status", lambda: SandboxStatus(False, "bwrap not found"))
    result = CliRunner().invoke(app, ["doctor", "--json"])
    assert result.exit_code == 0, result.output
    pilot = json.loads(result.stdout)["details"][0]
    assert pilot["name"] == "ladder-code (--sandbox bwrap)" and pilot["ok"] is False
    assert "refuses (exit 2) unless --allow-unsandboxed" in pilot["found"]
    assert pilot["fix"].startswith("apt-get install bubblewrap")


def test_doctor_says_which_limits_hold_an_attempt(monkeypatch: pytest.MonkeyPatch) -> None:
    result = CliRunner().invoke(app, ["doctor", "--json"])
    limits = json.loads(result.stdout)["details"][1]
    assert limits["name"] == "ladder-code attempt limits (defaults)"
    if cgroup_support().layout is not None:
        assert limits["ok"] and limits["found"].startswith("per attempt (cgroup v")

    monkeypatch.setenv(lean.ENV_ATTEMPT_CGROUP, "off")
    result = CliRunner().invoke(app, ["doctor", "--json"])
    limits = json.loads(result.stdout)["details"][1]
    assert (
        limits["ok"] is False
        and "(no cgroup per attempt (GAPSCOPE_ATTEMPT_CGROUP=off)" in (limits["found"])
    )
    # the fallback in force: rlimits under a uid, or none (with why the uid cannot sandbox)
    assert re.match(r"(per attempt \(rlimits under uid \d+\): 64 processes|nothing per attempt)",
                    limits["found"])  # fmt: skip
    assert "memory 1024 MB" not in limits["found"] and "Delegate=yes" in limits["fix"]


def test_the_attempt_sees_no_problem_file_package_secret_or_home() -> None:
    require_code_sandbox()
    bundled = Path(sandbox.__file__).with_name("data") / "code_pilot.jsonl"
    hidden = [str(bundled), "/etc/shadow", "/tmp", str(SRC), os.getcwd()]
    home = Path.home()
    interpreter = Path(sys.base_prefix).resolve()
    # of the home folder, at most the path down to the interpreter exists (bound alone)
    on_the_way = (
        [interpreter.relative_to(home).parts[0]] if interpreter.is_relative_to(home) else []
    )
    program = f"""
import os
print([p for p in {hidden!r} if os.path.exists(p)])
print(sorted(os.listdir({str(home)!r})) if os.path.isdir({str(home)!r}) else [])
print([f for f in {sorted(sandbox._readable_elsewhere())!r} if os.path.isdir(f) and os.listdir(f)])
print(sorted(os.listdir('/proc'))[:2], os.getppid())
"""
    # the answer is what an attempt that can reach none of them prints
    expected = f"[]\n{on_the_way}\n[]\n['1', '2'] 1\n"
    result = run_tests(program, [CodeTest("", expected)], None, Limits(time_s=5.0))
    assert result.solved, result
