"""The kernel judge fails closed: only comparator's exit status 0 makes a VALID, a killed
build is never a cached ``lean_error``, and a verdict is never served for another judge.

The adversaries are issue 26's reproductions, against comparator's command line (faked by
``fake_comparator.py``): a success line with a failing exit, a forged last line, SIGKILL.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from gapscope.analysis.prove import ProblemCounts
from gapscope.lean.backend import CheckRequest
from gapscope.lean.bounded import Run
from gapscope.lean.cache import VerdictCache
from gapscope.lean.childenv import ENV_PASS
from gapscope.lean.kernel import SOLUTION_NOT_BUILT, rejection
from gapscope.lean.local import LocalBackend
from gapscope.lean.verdict import LeanVerdict, Status
from gapscope.prove.coherence import Coherence, classify
from gapscope.prove.extract import ExtractionStatus
from tests.lean.test_acceptance import CHALLENGE, HEADER, HONEST, NAMES, fake_kernel

Make = Callable[..., LocalBackend]


@pytest.fixture(autouse=True)
def _pass_the_fake_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fake comparator reads its mode from the environment, which children get only
    through the allow-list."""
    monkeypatch.setenv(ENV_PASS, "FAKE_COMPARATOR")


def _check(project: Path, solution: str = HONEST) -> Status:
    return fake_kernel().check(project, HEADER, CHALLENGE, solution, NAMES, 10.0, False).status


def test_a_success_line_counts_only_with_exit_status_zero(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _check(project) is Status.VALID
    monkeypatch.setenv("FAKE_COMPARATOR", "okay_exit_1")  # prints "Your solution is okay!"
    assert _check(project) is not Status.VALID


@pytest.mark.parametrize("mode", ["sigkill", "child_killed"])
def test_a_killed_check_is_a_server_error_and_is_not_cached(
    make_backend: Make, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, mode: str
) -> None:
    cache = VerdictCache(tmp_path / "verdicts.jsonl")
    backend = make_backend(max_workers=1, kernel_checker=fake_kernel(), cache=cache)
    monkeypatch.setenv("FAKE_COMPARATOR", mode)
    request = CheckRequest(HONEST, HEADER, 10.0, NAMES, CHALLENGE)
    verdict = backend.check_many([request])[0]
    assert verdict.status is Status.SERVER_ERROR, verdict
    assert len(cache) == 0  # the machine failed; the proof is still unknown
    monkeypatch.delenv("FAKE_COMPARATOR")
    assert backend.check_many([request])[0].status is Status.VALID


def test_the_solutions_forged_line_does_not_decide_why_it_was_rejected(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model's build prints a kill line (to dodge the cache); comparator's own last
    line, printed after every child exited, says what it found."""
    monkeypatch.setenv("FAKE_COMPARATOR", "forged_exception")
    sorry = "theorem p_false : Nat.Prime 4 := sorry"
    assert _check(project, sorry) is Status.SORRY


def test_a_rejection_is_read_from_comparators_own_last_line() -> None:
    def status(output: str, code: int = 1) -> Status:
        return rejection(Run(code, output))[0]

    build = "Building GapscopeChallenge\nExporting\nBuilding GapscopeSolution\n"
    # a failed or killed build establishes nothing, whatever the model's log before it says
    assert status(build + "uncaught exception: Child exited with 1") is Status.SERVER_ERROR
    assert status(build + "uncaught exception: Child exited with 137") is Status.SERVER_ERROR
    assert status(build + "uncaught exception: Illegal axiom detected: 'x'") is Status.SORRY
    forged = build + "uncaught exception: Illegal axiom detected: 'x'\n"
    assert status(forged + "uncaught exception: Lean default kernel rejects") is Status.LEAN_ERROR
    mismatch = "uncaught exception: Challenge and solution theorem statement do not match: 't'"
    assert status(build + mismatch) is Status.MISSING_DECLARATION
    assert status(build, -9) is Status.SERVER_ERROR  # comparator itself killed
    assert status(build) is Status.SERVER_ERROR  # no reason given: nothing established
    # the model's own text before comparator's line never decides: an error naming
    # `«signal 9»` cannot turn a rejection into an uncounted server_error
    spoof = build + "error: unknown identifier 'signal 9 Killed out of memory'\n"
    assert status(spoof + "uncaught exception: Lean default kernel rejects") is Status.LEAN_ERROR


def test_a_solution_that_does_not_build_is_told_apart_only_after_the_challenge_built() -> None:
    """comparator's own ``Building GapscopeSolution`` line comes before any of the model's
    code runs: a non-zero build after it is the solution's failure (still server_error in a
    run, named so the self-test can count it); before it, or killed, it is not."""
    challenge = "Building GapscopeChallenge\nExporting\n"
    solution = challenge + "Building GapscopeSolution\n"
    failed = rejection(Run(1, solution + "uncaught exception: Child exited with 1"))
    assert failed == (Status.SERVER_ERROR, f"{SOLUTION_NOT_BUILT}: Child exited with 1")
    for output in (
        solution + "uncaught exception: Child exited with 137",  # SIGKILL: out of memory
        challenge + "uncaught exception: Child exited with 1",  # the challenge's build
        "Building GapscopeChallenge\nuncaught exception: Child exited with 1",
    ):
        status, detail = rejection(Run(1, output))
        assert status is Status.SERVER_ERROR and not detail.startswith(SOLUTION_NOT_BUILT)


def test_a_verdict_is_never_served_for_another_judge(
    make_backend: Make, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A repl-text VALID cached with no checker is checked again once comparator is
    configured (and comparator's rejection stands)."""
    cache = VerdictCache(tmp_path / "verdicts.jsonl")
    request = CheckRequest(HONEST, HEADER, 10.0, NAMES, CHALLENGE)
    alone = make_backend(max_workers=1, kernel_checker=None, cache=cache)
    assert alone.check_many([request])[0].checks == ("repl-text",)
    monkeypatch.setenv("FAKE_COMPARATOR", "okay_exit_1")
    judged = make_backend(max_workers=1, kernel_checker=fake_kernel(), cache=cache)
    assert judged.judge != alone.judge
    assert judged.check_many([request])[0].status is not Status.VALID


def test_the_judges_identity_includes_the_checkers_revision(make_backend: Make) -> None:
    from gapscope.lean.kernel import KernelChecker
    from gapscope.lean.verdict import Checker

    one = make_backend(kernel_checker=fake_kernel())
    other = KernelChecker(Checker.COMPARATOR, (sys.executable, "x"), "another-rev")
    assert make_backend(kernel_checker=other).judge != one.judge


@pytest.mark.parametrize("mode", ["sigkill", "child_killed"])
def test_a_check_the_model_s_build_kills_counts_against_the_attempt(
    make_backend: Make, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    # The REPL accepted the code; then its kernel build died (code that exhausts memory gets
    # the build SIGKILLed). That is no verdict, but it must not drop out of prove's
    # fractions: the attempt is counted, unproven, under its own class.
    backend = make_backend(max_workers=1, kernel_checker=fake_kernel())
    monkeypatch.setenv("FAKE_COMPARATOR", mode)
    verdict = backend.check_many([CheckRequest(HONEST, HEADER, 10.0, NAMES, CHALLENGE)])[0]
    coherence = classify(ExtractionStatus.BLOCK, verdict)
    assert coherence is Coherence.UNSETTLED
    counts = ProblemCounts("p", {c: int(c is coherence) for c in Coherence})
    assert counts.n == 1 and counts.c == 0


def test_a_replay_the_code_breaks_counts_against_the_attempt(make_backend: Make) -> None:
    verdict = make_backend(max_workers=1).check_many(
        [CheckRequest(HONEST + "\n-- fake:kernel_reject", HEADER, 10.0, NAMES, CHALLENGE)]
    )[0]
    assert verdict.status is Status.SERVER_ERROR and "restore" in verdict.detail
    assert classify(ExtractionStatus.BLOCK, verdict) is Coherence.UNSETTLED
    # a check that failed before Lean accepted anything is still left out
    failed = LeanVerdict(Status.SERVER_ERROR, detail="the header did not load")
    assert classify(ExtractionStatus.BLOCK, failed) is Coherence.SERVER_ERROR
