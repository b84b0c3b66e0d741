"""Run the known-answer cases through a real backend and each checker it has; keep the result.

Every case goes through the REPL path (``repl-text``: what ``LocalBackend`` concludes before
any kernel checker) and every theorem case also straight through the kernel checker, when the
backend has one - so that each judge is tested on every case, not only on those the REPL
passed on. First, every Lean program gapscope ships is compiled in the workspace
(``programs``): one that does not compile fails the self-test, named with Lean's first error;
then each probe handed in runs its program on an input with a known output (T2's tracer on a
small project with a known dependency graph): an empty or a different output fails it.
A case whose header needs a package the workspace has not built (``needs``: Mathlib) is
recorded as skipped. The screen (``gapscope.lean.screen``, applied by the diagnostics before
any backend) is not in this path: every case, those the screen would refuse included, is put
to the REPL and the kernel checker themselves, so the judge is tested on its own.
Every program the self-test starts is held as in a run: the REPLs by the backend's pool, the
kernel checker, the compiles (``lake env lean``) and the probes' ``lake`` calls by the
backend's bounds, each run on its own (:mod:`gapscope.lean.bounded`); a limit that stops one
fails its result, naming the limit. Nothing is cached: the point is to see this installation
answer.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from gapscope.lean.backend import CheckRequest
from gapscope.lean.kernel import SOLUTION_NOT_BUILT
from gapscope.lean.packages import locked_packages
from gapscope.lean.selftest.cases import Case, load_cases
from gapscope.lean.selftest.programs import (
    COMPILE_PATH,
    PROBE_PATH,
    Probe,
    compile_program,
    shipped_programs,
)
from gapscope.lean.selftest.record import save_record
from gapscope.lean.verdict import LeanVerdict, Status

if TYPE_CHECKING:
    from gapscope.lean.local import LocalBackend

REPL_TEXT = "repl-text"
UNSETTLED = frozenset({Status.SERVER_ERROR, Status.TIMEOUT})


@dataclass(frozen=True)
class CaseResult:
    """One case on one path: the status reached, whether it is the known answer (None: the
    path is documented to miss this case, so it is recorded, not asserted)."""

    case: str
    path: str
    status: str
    ok: bool | None
    detail: str


@dataclass(frozen=True)
class SelfTestResult:
    passed: bool
    results: tuple[CaseResult, ...]
    record: Path
    elapsed_s: float

    @property
    def failures(self) -> list[CaseResult]:
        return [r for r in self.results if r.ok is False]


def judged(case: Case, path: str, verdict: LeanVerdict) -> CaseResult:
    """Compare a verdict with the case's known answer. comparator failing to build the
    solution after it built the challenge (:data:`SOLUTION_NOT_BUILT`) is its refusal of that
    solution here: the self-test puts cases to it that the REPL rejects (an ``unsafe`` or a
    ``partial`` definition does not compile), where a run would have stopped at the REPL."""
    if verdict.status in UNSETTLED and not verdict.detail.startswith(SOLUTION_NOT_BUILT):
        ok: bool | None = False  # nothing was established: not a pass
    else:
        ok = verdict.valid == (case.expect == "valid")
    if path in case.misses and verdict.status not in UNSETTLED:
        ok = None
    return CaseResult(case.name, path, verdict.status.value, ok, verdict.detail[:500])


def run_selftest(
    backend: LocalBackend,
    cases: list[Case] | None = None,
    timeout_s: float = 120.0,
    probes: Sequence[Probe] = (),
) -> SelfTestResult:
    """Compile the shipped Lean programs in ``backend``'s workspace, run each of ``probes``
    (a program whose output is compared with a known one) and ``cases`` (default: the
    shipped ones) on its paths; store the result under the backend's installation key in its
    workspace."""
    start = time.monotonic()
    cases = load_cases() if cases is None else cases
    results: list[CaseResult] = []
    for name, program in shipped_programs().items():
        done = compile_program(
            program, backend.project, backend.sandboxed, timeout_s, backend.limits
        )
        detail = done.detail if done.ok else f"{name}: {done.detail}"
        results.append(CaseResult(name, COMPILE_PATH, done.status, done.ok, detail[:500]))
    for probe in probes:
        ran = probe.run(backend.project, backend.sandboxed, timeout_s, backend.limits)
        results.append(CaseResult(probe.name, PROBE_PATH, ran.status, ran.ok, ran.detail[:500]))
    built = {package.name.lower() for package in locked_packages(backend.project)}
    for case in cases:
        unmet = [need for need in case.needs if need.lower() not in built]
        if unmet:
            why = f"needs {', '.join(unmet)}, which this workspace has not built"
            results.append(CaseResult(case.name, REPL_TEXT, "skipped", None, why))
            continue
        request = CheckRequest(case.solution, case.header, timeout_s, case.required, case.challenge)
        results.append(judged(case, REPL_TEXT, backend.check_repl(request)))
        kernel = backend.kernel
        if kernel is not None and case.kind == "theorem":
            verdict = kernel.check(
                backend.project, case.header, case.challenge, case.solution,
                case.required, timeout_s, backend.sandboxed, (), backend.limits,
            )  # fmt: skip
            results.append(judged(case, kernel.label, verdict))
    passed = bool(results) and all(r.ok is not False for r in results)
    record = {
        "passed": passed,
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "sandboxed": backend.sandboxed,
        "results": [asdict(r) for r in results],
    }
    path = save_record(backend.project, backend.installation, record)
    backend.selftest = passed
    return SelfTestResult(passed, tuple(results), path, time.monotonic() - start)


def selftest_workspace(
    project: Path,
    *,
    allow_unsandboxed: bool = False,
    timeout_s: float = 120.0,
    probes: Sequence[Probe] = (),
) -> SelfTestResult:
    """Open the local backend ``project`` as a run would (sandbox, REPL command and kernel
    checker choices from the environment), ungated, and run the shipped cases and ``probes``
    on it; LeanUnavailable when it cannot be opened."""
    from gapscope.lean.backend import LeanUnavailable
    from gapscope.lean.factory import open_backend
    from gapscope.lean.local import LocalBackend

    backend = open_backend(
        f"local:{project}",
        allow_unsandboxed=allow_unsandboxed,
        allow_untested=True,
        cache=None,
        progress=False,
    )
    with backend:
        if not isinstance(backend, LocalBackend):
            raise LeanUnavailable(f"{project} is not a local Lean workspace")
        return run_selftest(backend, timeout_s=timeout_s, probes=probes)
