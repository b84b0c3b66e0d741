"""The local backend end to end through the fake REPL subprocess (tests/lean/fake_repl.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from gapscope.lean.backend import CheckRequest
from gapscope.lean.cache import VerdictCache
from gapscope.lean.childenv import ENV_PASS
from gapscope.lean.local import LocalBackend
from gapscope.lean.verdict import Checker, Status
from tests.lean.conftest import FAKE_REPL, read_log

HEADER = "import GapscopeNNG"
Make = Callable[..., LocalBackend]


def proof(behaviour: str = "valid", name: str = "foo") -> str:
    return f"theorem {name} (n : Nat) : n + 0 = n := by\n  simp -- fake:{behaviour}"


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return (
        Path(f"/proc/{pid}/status").exists()
        and "zombie" not in Path(f"/proc/{pid}/status").read_text()
    )


@pytest.mark.parametrize(
    ("behaviour", "status", "in_detail"),
    [
        ("valid", Status.VALID, ""),
        ("noaxioms", Status.VALID, ""),
        ("error", Status.LEAN_ERROR, "error"),
        ("sorry", Status.SORRY, "sorry"),
        ("sorry_old_quotes", Status.SORRY, "sorry"),
        ("hidden_sorry", Status.SORRY, "sorryAx"),
        ("user_axiom", Status.SORRY, "gapscope_fake_axiom"),
        ("native_decide", Status.SORRY, "Lean.ofReduceBool"),
        ("unknown_constant", Status.LEAN_ERROR, "could not be queried"),
        ("repl_error", Status.SERVER_ERROR, "Unknown environment"),
    ],
)
def test_fixture_behaviours_map_to_verdicts(
    make_backend: Make, behaviour: str, status: Status, in_detail: str
) -> None:
    verdict = make_backend(max_workers=1).check(proof(behaviour), header=HEADER)
    assert verdict.status is status, verdict
    assert in_detail in verdict.detail


def test_header_is_sent_once_per_process_and_code_runs_in_its_env(
    make_backend: Make, repl_log: Path
) -> None:
    backend = make_backend(max_workers=2)
    verdicts = backend.check_many([CheckRequest(proof(name=f"t{i}"), HEADER) for i in range(8)])
    assert all(v.valid for v in verdicts)
    log = read_log(repl_log)
    headers = Counter(e["pid"] for e in log if e["cmd"] == HEADER)
    assert set(headers.values()) == {1}
    assert len(headers) == backend.pool.stats.started <= 2
    code = [e for e in log if e["cmd"] != HEADER]
    assert len(code) == 8 and all(e["env"] == 0 for e in code)


def test_imports_in_code_join_the_header(make_backend: Make, repl_log: Path) -> None:
    backend = make_backend(max_workers=1)
    assert backend.check("import GapscopeNNG\n\n" + proof()).valid
    assert backend.check(proof(name="bar"), header=HEADER).valid
    log = read_log(repl_log)
    assert [e["cmd"] for e in log].count(HEADER) == 1
    assert backend.pool.stats.started == 1


def test_without_header_each_command_gets_a_fresh_environment(
    make_backend: Make, repl_log: Path
) -> None:
    backend = make_backend(max_workers=1)
    assert backend.check(proof()).valid and backend.check(proof(name="bar")).valid
    assert all("env" not in e for e in read_log(repl_log))


def test_processes_are_recycled_after_max_uses(make_backend: Make, repl_log: Path) -> None:
    backend = make_backend(max_workers=1, max_uses=2)
    backend.check_many([CheckRequest(proof(name=f"t{i}"), HEADER) for i in range(5)])
    pids = Counter(e["pid"] for e in read_log(repl_log) if e["cmd"] != HEADER)
    assert sorted(pids.values()) == [1, 2, 2]
    assert backend.pool.stats.retired_uses == 2


def test_processes_are_recycled_past_the_memory_limit(make_backend: Make) -> None:
    backend = make_backend(max_workers=1, max_rss_mb=48)
    assert backend.check(proof("big"), header=HEADER).valid
    assert backend.pool.stats.retired_memory == 1
    assert backend.check(proof(), header=HEADER).valid
    assert backend.pool.stats.started == 2


def test_timeout_kills_and_replaces_the_process(make_backend: Make, repl_log: Path) -> None:
    backend = make_backend(max_workers=1)
    assert backend.check(proof(), header=HEADER).valid
    first = read_log(repl_log)[0]["pid"]
    verdict = backend.check(proof("timeout"), header=HEADER, timeout_s=0.5)
    assert verdict.status is Status.TIMEOUT and verdict.elapsed_s < 3
    assert not alive(first)
    assert backend.check(proof(), header=HEADER).valid
    assert read_log(repl_log)[-1]["pid"] != first


@pytest.mark.parametrize(
    ("behaviour", "detail"), [("crash", "INTERNAL PANIC"), ("malformed", "malformed JSON")]
)
def test_crash_and_garbage_are_server_errors_and_the_pool_recovers(
    make_backend: Make, behaviour: str, detail: str
) -> None:
    backend = make_backend(max_workers=1)
    verdict = backend.check(proof(behaviour), header=HEADER, timeout_s=5)
    assert verdict.status is Status.SERVER_ERROR and detail in verdict.detail
    assert backend.check(proof(), header=HEADER).valid
    assert backend.pool.stats.discarded == 1 and backend.pool.stats.started == 2


def test_mixed_batch_keeps_order_and_bounds_processes(make_backend: Make, repl_log: Path) -> None:
    behaviours = ["valid", "error", "crash", "sorry", "timeout", "valid", "user_axiom", "valid"]
    backend = make_backend(max_workers=2)
    verdicts = backend.check_many(
        [CheckRequest(proof(b, f"t{i}"), HEADER, timeout_s=1.0) for i, b in enumerate(behaviours)]
    )
    assert [v.status for v in verdicts] == [
        Status.VALID,
        Status.LEAN_ERROR,
        Status.SERVER_ERROR,
        Status.SORRY,
        Status.TIMEOUT,
        Status.VALID,
        Status.SORRY,
        Status.VALID,
    ]
    live = {e["pid"] for e in read_log(repl_log)}
    assert backend.pool.stats.started == len(live) <= 4  # 2 slots + the 2 replacements


def test_cache_hit_sends_nothing_and_timeouts_are_not_cached(
    make_backend: Make, repl_log: Path, tmp_path: Path
) -> None:
    cache = VerdictCache(tmp_path / "verdicts.jsonl")
    backend = make_backend(max_workers=1, cache=cache)
    requests = [CheckRequest(proof(), HEADER), CheckRequest(proof("timeout"), HEADER, 0.3)]
    first = backend.check_many(requests)
    sent = len(read_log(repl_log))
    second = backend.check_many(requests)
    assert second[0] == first[0] and second[0].valid
    assert second[1].status is Status.TIMEOUT
    log = read_log(repl_log)
    assert len([e for e in log[sent:] if e["cmd"] != HEADER]) == 1  # only the timeout re-ran
    assert len(cache) == 1
    assert (
        VerdictCache(tmp_path / "verdicts.jsonl").get(
            backend.toolchain, HEADER, proof(), judge=backend.judge
        )
        == first[0]
    )


def test_header_that_fails_is_a_server_error(make_backend: Make) -> None:
    backend = make_backend(max_workers=1, header_timeout_s=0.3, env={"FAKE_REPL_IMPORT_DELAY": "5"})
    verdict = backend.check(proof(), header=HEADER)
    assert verdict.status is Status.SERVER_ERROR and "did not load" in verdict.detail


def test_unstartable_command_is_a_server_error(project: Path, tmp_path: Path) -> None:
    missing = tmp_path / "missing" / "repl"  # made here: a fixed path may exist on some machine
    with LocalBackend(project, repl_command=[str(missing)], allow_unsandboxed=True) as backend:
        verdict = backend.check(proof())
    # unsandboxed: Popen fails; sandboxed: bwrap starts, then cannot exec the command
    assert verdict.status is Status.SERVER_ERROR and str(missing) in verdict.detail


def test_toolchain_comes_from_the_project(make_backend: Make) -> None:
    assert make_backend().toolchain == "leanprover/lean4:v4.33.0-fake"


def test_progress_bar_goes_to_stderr(
    make_backend: Make, capsys: pytest.CaptureFixture[str]
) -> None:
    backend = make_backend(max_workers=1, progress=True)
    backend.check_many([CheckRequest(proof(name=f"t{i}")) for i in range(3)])
    captured = capsys.readouterr()
    assert "Lean checks" in captured.err and captured.out == ""


def test_a_repl_that_answers_twice_does_not_desync_the_next_check(
    make_backend: Make, repl_log: Path
) -> None:
    """Regression: the second answer stayed buffered and became the next check's verdict."""
    backend = make_backend(max_workers=1)
    assert backend.check(proof("twice"), header=HEADER).valid
    time.sleep(0.2)  # the extra answer has arrived
    verdict = backend.check(proof("error", name="bar"), header=HEADER)
    assert verdict.status is Status.LEAN_ERROR, verdict
    assert backend.pool.stats.discarded == 1
    pids = [e["pid"] for e in read_log(repl_log) if e["cmd"] != HEADER]
    assert pids[0] != pids[1]  # the desynchronised REPL was replaced


def test_a_header_that_hangs_respects_the_check_timeout(make_backend: Make) -> None:
    """Regression: the header load waited ``header_timeout_s`` (600 s by default), whatever
    the check's own timeout."""
    backend = make_backend(max_workers=1, env={"FAKE_REPL_IMPORT_DELAY": "8"})
    start = time.monotonic()
    verdict = backend.check(proof(), header=HEADER, timeout_s=0.5)
    assert time.monotonic() - start < 3.0
    assert verdict.status is Status.SERVER_ERROR and "within 0.5 s" in verdict.detail


def test_a_reply_arriving_late_is_never_taken_for_the_next_checks_answer(
    make_backend: Make, repl_log: Path
) -> None:
    """Regression: the REPL repeated its answer only when the next command came, after the
    stray-output checks; a ``sorry`` attempt then got the earlier VALID answer."""
    backend = make_backend(max_workers=1)
    assert backend.check(proof("late_twice"), header=HEADER).valid
    verdict = backend.check(proof("sorry"), header=HEADER)  # the same theorem, attempt 2
    assert verdict.status is Status.SERVER_ERROR and "out of step" in verdict.detail
    assert backend.pool.stats.discarded == 1
    assert backend.check(proof("sorry"), header=HEADER).status is Status.SORRY


def test_a_reply_past_the_cap_is_a_server_error_naming_it(make_backend: Make) -> None:
    backend = make_backend(max_workers=1, max_reply_bytes=2**20, env={"FAKE_REPL_FLOOD_MB": "3"})
    verdict = backend.check(proof("flood"), header=HEADER)
    assert verdict.status is Status.SERVER_ERROR and "max_reply_bytes" in verdict.detail
    assert backend.pool.stats.discarded == 1
    assert backend.check(proof(), header=HEADER).valid


OWNER = """
import sys
from gapscope.lean.process import ReplProcess
from gapscope.lean.protocol import encode_command
repl = ReplProcess([sys.executable, sys.argv[1]])
print(repl.pid, flush=True)
repl.request(encode_command("theorem t : True := trivial -- fake:timeout"), 3600)
"""


def test_a_busy_repl_dies_with_its_owner(repl_log: Path) -> None:
    """Regression: a REPL whose owner was killed kept running (an orphan lived 31 minutes):
    busy elaborating, it never read the end of its input."""
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER, str(FAKE_REPL)],
        stdout=subprocess.PIPE,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join(sys.path),
            "FAKE_REPL_LOG": str(repl_log),
            ENV_PASS: "FAKE_REPL_LOG",
        },
        text=True,
    )
    assert owner.stdout is not None
    child = int(owner.stdout.readline())
    for _ in range(200):  # until the REPL has taken the command and sleeps in it
        if read_log(repl_log):
            break
        time.sleep(0.05)
    assert read_log(repl_log) and alive(child)
    owner.kill()
    owner.wait()
    for _ in range(200):  # the kernel delivers the death signal; wait for it to land
        if not alive(child):
            break
        time.sleep(0.05)
    assert not alive(child)


def test_a_plain_check_is_marked_as_read_from_the_repls_text(make_backend: Make) -> None:
    backend = make_backend(max_workers=1)
    assert backend.check(proof(), header=HEADER).checker is Checker.REPL_TEXT
    crashed = backend.check(proof("crash"), header=HEADER, timeout_s=5)
    assert crashed.status is Status.SERVER_ERROR and crashed.checker is Checker.NONE
