"""The self-test puts the cases the screen would refuse to the judge itself.

The screen (``gapscope.lean.screen``) runs in the diagnostics, before any backend; the Lean
floor never calls it, and the self-test's runner hands every case's solution, unchanged, to
the REPL path and to the kernel checker. So a hostile case (``#eval``, ``run_elab``,
``initialize``, ``prelude``, ...) tests the judge, not the screen: a judge that needed the
screen to reject it would fail the self-test.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest

from gapscope.lean import LeanVerdict, Status, screen_code
from gapscope.lean.backend import CheckRequest
from gapscope.lean.local import LocalBackend, repl_bounds
from gapscope.lean.selftest import InstallationKey, load_cases
from gapscope.lean.selftest import runner as selftest_runner
from gapscope.lean.selftest.runner import REPL_TEXT, run_selftest


class _Kernel:
    label = "kernel:recording"

    def __init__(self) -> None:
        self.solutions: list[str] = []

    def check(
        self, project: Path, header: str, challenge: str, solution: str, *rest: Any
    ) -> LeanVerdict:
        self.solutions.append(solution)
        return LeanVerdict(Status.LEAN_ERROR, detail="rejected by the recording judge")


class _Backend:
    """What ``run_selftest`` uses of a LocalBackend, recording what reaches each judge."""

    def __init__(self, project: Path) -> None:
        self.project = project
        self.sandboxed = False
        self.limits = repl_bounds(None)
        self.kernel = _Kernel()
        self.installation = InstallationKey("toolchain", "repl", ("repl-text",), "source")
        self.selftest = False
        self.requests: list[CheckRequest] = []

    def check_repl(self, request: CheckRequest) -> LeanVerdict:
        self.requests.append(request)
        return LeanVerdict(Status.LEAN_ERROR, detail="rejected by the recording REPL")


def test_every_case_the_screen_refuses_reaches_the_repl_and_the_kernel_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(selftest_runner, "shipped_programs", dict)  # no Lean here to compile
    refused = [c for c in load_cases() if not c.needs and screen_code(c.solution) is not None]
    names = {c.name for c in refused}
    assert {
        "challenge-tampered", "challenge-forged-for-a-later-build", "initialize-hostile",
        "unchecked-constant", "add-decl-core-unchecked", "prelude-primitive", "unsafe-definition",
        "implemented-by", "macro-redefines-equality",
    } <= names  # fmt: skip
    backend = _Backend(tmp_path)
    result = run_selftest(cast(LocalBackend, backend), refused, timeout_s=1.0)
    assert [r.code for r in backend.requests] == [c.solution for c in refused]
    theorems = [c.solution for c in refused if c.kind == "theorem"]
    assert backend.kernel.solutions == theorems
    paths = {(r.case, r.path) for r in result.results}
    assert {(c.name, REPL_TEXT) for c in refused} <= paths
    assert {(c.name, _Kernel.label) for c in refused if c.kind == "theorem"} <= paths
    assert not any(r.status == Status.FORBIDDEN.value for r in result.results)
