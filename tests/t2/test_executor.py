"""The job-runner interface: local pool and Ray actors give the same verdicts in order."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from gapscope.lean.backend import CheckRequest, LeanUnavailable
from gapscope.lean.executor import RayBackend, RayOptions, open_checker
from gapscope.lean.local import LocalBackend
from gapscope.lean.verdict import Status, broken_by_code
from tests.t2.conftest import fake_options

BEHAVIOURS = ("valid", "error", "sorry", "hidden_sorry", "native_decide", "user_axiom", "noaxioms")


def _requests(n: int) -> list[CheckRequest]:
    return [
        CheckRequest(
            f"theorem t{i} (n : Nat) : n + 0 = n := rfl -- fake:{BEHAVIOURS[i % len(BEHAVIOURS)]}",
            "import Mathlib",
        )
        for i in range(n)
    ]


def test_local_executor_is_todays_backend(project: Path) -> None:
    with open_checker(f"local:{project}", **fake_options()) as checker:
        assert isinstance(checker, LocalBackend)
        assert checker.check_many(_requests(2))[0].status is Status.VALID


def test_unknown_executor_is_refused(project: Path) -> None:
    with pytest.raises(ValueError, match="unknown executor 'dask'"):
        open_checker(f"local:{project}", executor="dask")


def test_ray_missing_names_the_install_line(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(LeanUnavailable, match=r"pip install 'gapscope\[ray\]'"):
        open_checker(f"local:{project}", executor="ray", **fake_options())


def test_ray_gives_the_local_verdicts_in_the_same_order(project: Path, ray_session: Any) -> None:
    requests = _requests(50)
    with open_checker(f"local:{project}", **fake_options(workers=2)) as local:
        expected = local.check_many(requests)
    options = RayOptions(actors=2)
    with open_checker(f"local:{project}", executor="ray", ray=options, **fake_options()) as ray:
        got = ray.check_many(requests)
        assert ray.toolchain == local.toolchain
    assert [v.status for v in got] == [v.status for v in expected]
    assert [v.axioms for v in got] == [v.axioms for v in expected]
    assert {v.status for v in got} == {Status.VALID, Status.LEAN_ERROR, Status.SORRY}


def _kill_first_actor_soon(backend: RayBackend, ray: Any, after_s: float) -> threading.Thread:
    victim = backend.actors[0]

    def kill() -> None:
        time.sleep(after_s)
        ray.kill(victim)

    thread = threading.Thread(target=kill)
    thread.start()
    return thread


@pytest.mark.slow  # ~5 s: the replacement actor starts a fresh process and reloads its header
def test_a_killed_actor_loses_no_check(project: Path, ray_session: Any) -> None:
    requests = [CheckRequest(f"theorem t{i} : True := trivial", "import M") for i in range(16)]
    backend = open_checker(
        f"local:{project}",
        executor="ray",
        ray=RayOptions(actors=2),
        **fake_options(delay=0.1),
    )
    assert isinstance(backend, RayBackend)
    with backend:
        backend.check_many(requests[:2])  # both actors up and their headers loaded
        killer = _kill_first_actor_soon(backend, ray_session, 0.25)
        verdicts = backend.check_many(requests)
        killer.join()
    assert len(verdicts) == 16
    assert all(v.status is Status.VALID for v in verdicts)
    assert backend.stats.retries >= 1 and backend.stats.restarts == 1


def test_a_check_out_of_actors_is_a_server_error_not_a_proof(
    project: Path, ray_session: Any
) -> None:
    requests = [CheckRequest(f"theorem t{i} : True := trivial", "import M") for i in range(8)]
    options = RayOptions(actors=1, max_retries=0, max_restarts=0)
    backend = open_checker(
        f"local:{project}", executor="ray", ray=options, **fake_options(delay=0.1)
    )
    assert isinstance(backend, RayBackend)
    with backend:
        backend.check_many(requests[:1])  # the actor's REPL is up
        killer = _kill_first_actor_soon(backend, ray_session, 0.3)
        verdicts = backend.check_many(requests)
        killer.join()
    statuses = [v.status for v in verdicts]
    assert len(statuses) == 8 and statuses[-1] is Status.SERVER_ERROR
    valid = statuses.count(Status.VALID)
    # Checks finished before the kill are proofs; every later one is an error, none lost.
    assert statuses == [Status.VALID] * valid + [Status.SERVER_ERROR] * (8 - valid)
    assert "died" in verdicts[-1].detail or "no live Ray actor" in verdicts[-1].detail
    # ... and the control check after the check the actor died on, with no actor left to run it
    assert backend.stats.abandoned == 8 - valid + 1
    assert not any(broken_by_code(v) for v in verdicts)


@pytest.mark.parametrize("command", ["prove", "onng"])
def test_prove_and_onng_take_the_executor_option(
    command: str, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from gapscope.app.main import app

    monkeypatch.setitem(sys.modules, "ray", None)
    problems = tmp_path / "p.jsonl"
    problems.write_text(
        '{"name": "p1", "split": "test", "header": "import Mathlib\\n",'
        ' "formal_statement": "theorem p1 : True := by"}\n'
    )
    args = ["run", command, "--lean", f"local:{project}", "--executor", "ray"]
    if command == "prove":
        args += ["--dataset", str(problems)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert "pip install 'gapscope[ray]'" in result.output
