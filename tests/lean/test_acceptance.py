"""Which theorem was proved: the official name's type is compared outside the model's
environment, by the REPL's replay (``repl-text``) and by the kernel judge (comparator, faked).

The attacks are the measured false "proved" verdicts of issue 17: the official statement
restated inside ``namespace Evil`` where ``Nat.Prime`` means ``True``, with a root
``p_false : True`` (or the statement smuggled into a ``«...»`` name) supplying the name.
"""

# ruff: noqa: RUF001  (Lean's double-struck N is meant)

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from gapscope.lean.backend import CheckRequest
from gapscope.lean.kernel import KernelChecker
from gapscope.lean.local import LocalBackend
from gapscope.lean.verdict import Checker, Status
from tests.lean.conftest import read_log
from tests.lean.fake_tools import FAKE_BIN

FAKE_COMPARATOR = Path(__file__).parent / "fake_comparator.py"
HEADER = "import Mathlib"
CHALLENGE = "theorem p_false : Nat.Prime 4 := sorry"
NAMES = ("p_false",)
EVIL = "namespace Evil\n\ndef Nat.Prime (_ : ℕ) : Prop := True\n\n"
ATTACKS = {
    "namespace-restatement-plus-root-true": (
        f"{EVIL}theorem p_false : Nat.Prime 4 := trivial\n\nend Evil\n\n"
        "theorem p_false : True := trivial"
    ),
    "root-name-declared-inside-the-namespace": (
        f"{EVIL}theorem _root_.p_false : Nat.Prime 4 := trivial\n\nend Evil"
    ),
    "statement-smuggled-in-a-guillemet-name": (
        "theorem «theorem p_false : Nat.Prime 4 :=» : True := trivial\n\n"
        "theorem p_false : True := trivial"
    ),
    "official-name-only-inside-the-namespace": (
        f"{EVIL}theorem p_false : Nat.Prime 4 := trivial\n\nend Evil"
    ),
}
HONEST = "theorem p_false : Nat.Prime 4 := by\n  norm_num"
Make = Callable[..., LocalBackend]


def request(code: str) -> CheckRequest:
    return CheckRequest(code, HEADER, 10.0, NAMES, CHALLENGE)


def fake_kernel() -> KernelChecker:
    """The fake comparator, with the ``lean`` it queries before building on its PATH."""
    path = f"{FAKE_BIN}{os.pathsep}{os.environ['PATH']}"
    run = (sys.executable, str(FAKE_COMPARATOR))
    return KernelChecker(Checker.COMPARATOR, run, "fake-rev", {"PATH": path})


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_restating_the_statement_where_it_means_something_else_is_not_valid(
    make_backend: Make, attack: str
) -> None:
    verdict = make_backend(max_workers=1).check_many([request(ATTACKS[attack])])[0]
    assert verdict.status is Status.MISSING_DECLARATION, verdict
    assert verdict.checker is Checker.REPL_TEXT
    assert "p_false" in verdict.detail


def test_the_honest_proof_is_valid_and_says_which_checker_decided(make_backend: Make) -> None:
    verdict = make_backend(max_workers=1).check_many([request(HONEST)])[0]
    assert verdict.status is Status.VALID, verdict
    assert verdict.checker is Checker.REPL_TEXT and verdict.sandboxed is False
    assert verdict.axioms == ("Classical.choice", "Quot.sound", "propext")


def test_harness_queries_run_only_in_the_replayed_environment(
    make_backend: Make, repl_log: Path
) -> None:
    assert make_backend(max_workers=1).check_many([request(HONEST)])[0].valid
    log = [e for e in read_log(repl_log) if e.get("cmd") != HEADER]
    model = next(e for e in log if e.get("cmd") == HONEST)  # sent as written, nothing appended
    unpickle = next(i for i, e in enumerate(log) if "unpickleEnvFrom" in e)
    queries = [e for e in log if "#print axioms" in e.get("cmd", "")]
    assert len(queries) == 1 and log.index(queries[0]) == unpickle + 1
    assert queries[0]["env"] != model["env"]  # the env the unpickle created, not the model's
    assert log[unpickle - 1]["pickleTo"] == log[unpickle]["unpickleEnvFrom"]


def test_a_failed_unpickle_says_nothing_of_the_proof(make_backend: Make) -> None:
    """At the pinned REPL the unpickle runs no kernel check (replayToElabEnv), so its failure
    is the REPL's, never a ``lean_error`` about the proof (the old ``(kernel)`` branch)."""
    code = "theorem p_false : Nat.Prime 4 := by\n  norm_num -- fake:kernel_reject"
    verdict = make_backend(max_workers=1).check_many([request(code)])[0]
    assert verdict.status is Status.SERVER_ERROR and "restore" in verdict.detail


def test_required_names_without_a_challenge_are_never_valid(make_backend: Make) -> None:
    verdict = make_backend(max_workers=1).check_many([CheckRequest(HONEST, HEADER, 10.0, NAMES)])[0]
    assert verdict.status is Status.SERVER_ERROR and "challenge" in verdict.detail


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_the_kernel_checker_rejects_every_attack(project: Path, attack: str) -> None:
    verdict = fake_kernel().check(
        project, HEADER, CHALLENGE, ATTACKS[attack], NAMES, 10.0, sandboxed=False
    )
    assert verdict.status is Status.MISSING_DECLARATION, verdict
    assert verdict.checker is Checker.COMPARATOR
    assert verdict.checks == ("repl-text", "kernel:comparator")


def test_the_kernel_checker_has_the_last_word(make_backend: Make) -> None:
    backend = make_backend(max_workers=1, kernel_checker=fake_kernel())
    honest = backend.check_many([request(HONEST)])[0]
    assert honest.status is Status.VALID and honest.checker is Checker.COMPARATOR
    assert honest.checks == ("repl-text", "kernel:comparator")
    assert honest.selftest is False  # no self-test has passed in this project
    assert honest.bounds == "nothing per REPL (unsandboxed); nothing per kernel check (unsandboxed)"


def test_an_official_theorem_may_not_bring_its_own_imports(make_backend: Make) -> None:
    code = f"import Mathlib.Evil\n\n{HONEST}"
    verdict = make_backend(max_workers=1).check_many([request(code)])[0]
    assert verdict.status is Status.FORBIDDEN and "import" in verdict.detail
    same = make_backend(max_workers=1).check_many([request(f"{HEADER}\n\n{HONEST}")])[0]
    assert same.valid  # repeating the header's own import is harmless
