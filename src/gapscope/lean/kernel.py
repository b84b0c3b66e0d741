"""The out-of-environment kernel checker: the verdict of record for an official theorem.

The anchors are the Lean reference manual's "Validating a Lean Proof", leanprover/comparator and
SafeVerify: the *challenge* (the dataset's statement, proofs ``sorry``, in a module that only
imports the header) and the *solution* (the model's code on the same header) are compiled to
modules, and a separate Lean program - which never elaborates a line of the model's - imports
each into its own environment and decides. VALID requires, for every official name:

- the solution's constant of that exact name (root namespace) has the challenge's type;
- both environments agree on every constant that type mentions, transitively;
- its axioms are within :data:`gapscope.lean.verdict.STANDARD_AXIOMS`;
- and the solution's declarations replay through the kernel.

Two checkers are wired: SafeVerify where it is built in the workspace, else gapscope's own
(``checker/GapscopeCheck.lean``, run with ``lake env lean --run``; untested against a real
Lean, see docs/lean.md). comparator is reported by ``lean doctor`` but not run: it builds its
own modules with lake under landrun and needs its own project layout. Every step (both
compilations, the checker) runs inside the sandbox with only a scratch folder writable, and a
report that lacks any of the facts above is never VALID.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from gapscope.lean.process import die_with_parent
from gapscope.lean.sandbox import sandbox_argv
from gapscope.lean.verdict import STANDARD_AXIOMS, Checker, LeanMessage, LeanVerdict, Status

CHALLENGE_MODULE = "GapscopeChallenge"
SOLUTION_MODULE = "GapscopeSolution"
SAFEVERIFY_BINARIES = (
    ".lake/packages/SafeVerify/.lake/build/bin/safe_verify",
    ".lake/packages/safeverify/.lake/build/bin/safe_verify",
)
COMPARATOR_BINARIES = (".lake/packages/comparator/.lake/build/bin/comparator",)
GAPSCOPE_EXE = "gapscope_check"
"""gapscope's checker built into a workspace by ``gapscope lean setup`` (faster than
``lean --run``, which interprets it on every check)."""
MAX_OUTPUT_BYTES = 4 * 2**20
"""A checker's report is a line of JSON; output past this is cut (and then fails to parse)."""
REPORT_FACTS = ("in_challenge", "in_solution", "same_type", "constants_agree")
"""What the gapscope checker must affirm, each ``true``, for every official name."""


def checker_source() -> Path:
    """gapscope's own checker metaprogram, shipped as package data."""
    return Path(str(resources.files("gapscope.lean") / "checker" / "GapscopeCheck.lean"))


def _first_file(project: Path, candidates: Sequence[str]) -> Path | None:
    return next((project / c for c in candidates if (project / c).is_file()), None)


def find_comparator(project: Path) -> Path | None:
    """A comparator binary built in the workspace (reported, not run; module docstring)."""
    return _first_file(project, COMPARATOR_BINARIES)


@dataclass(frozen=True)
class Run:
    """A finished command: exit code (None: killed at the deadline) and its output."""

    code: int | None
    output: str


def run_bounded(argv: Sequence[str], cwd: Path, timeout_s: float) -> Run:
    """Run ``argv`` with a wall-clock limit; the process group dies at the deadline and with
    its owner, and only the first :data:`MAX_OUTPUT_BYTES` of its output are kept."""
    with tempfile.TemporaryFile() as sink:
        with subprocess.Popen(
            list(argv),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=die_with_parent,
        ) as proc:
            try:
                proc.wait(timeout=max(timeout_s, 0.01))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                code = None
            else:
                code = proc.returncode
        sink.seek(0)
        output = sink.read(MAX_OUTPUT_BYTES).decode("utf-8", "replace")
    return Run(code, output)


def judge_report(report: Any, names: Sequence[str], elapsed_s: float) -> LeanVerdict:
    """The verdict a gapscope checker report supports; VALID only if it affirms every fact
    (:data:`REPORT_FACTS`, ``replay.ok``, permitted axioms) for every official name."""

    def verdict(status: Status, detail: str, axioms: tuple[str, ...] | None = None) -> LeanVerdict:
        return LeanVerdict(status, (), elapsed_s, axioms, detail, checker=Checker.GAPSCOPE)

    if not isinstance(report, dict):
        return verdict(
            Status.SERVER_ERROR, f"the checker's report is not an object: {report!r:.200}"
        )
    if report.get("error"):
        return verdict(Status.SERVER_ERROR, f"the checker failed: {report['error']}")
    replay = report.get("replay")
    if not isinstance(replay, dict) or replay.get("ok") is not True:
        why = replay.get("error") if isinstance(replay, dict) else "no replay result"
        return verdict(Status.LEAN_ERROR, f"the kernel did not accept the solution: {why}")
    entries = report.get("theorems")
    by_name = (
        {e.get("name"): e for e in entries if isinstance(e, dict)}
        if isinstance(entries, list)
        else {}
    )
    found_axioms: set[str] = set()
    for name in names:
        entry = by_name.get(name)
        if entry is None:
            return verdict(Status.SERVER_ERROR, f"the checker's report says nothing of {name}")
        if entry.get("in_challenge") is not True:
            return verdict(Status.SERVER_ERROR, f"the challenge module does not declare {name}")
        failed = [fact for fact in REPORT_FACTS if entry.get(fact) is False]
        if failed:
            differing = ", ".join(map(str, entry.get("disagreeing") or ()))
            return verdict(
                Status.MISSING_DECLARATION,
                f"{name}: {', '.join(failed)} is false"
                + (f" (constants that differ: {differing})" if differing else "")
                + ": not the theorem asked for",
            )
        unsettled = [fact for fact in REPORT_FACTS if entry.get(fact) is not True]
        if unsettled:
            return verdict(
                Status.SERVER_ERROR,
                f"the checker's report does not establish {', '.join(unsettled)} for {name}",
            )
        axioms = entry.get("axioms")
        if not isinstance(axioms, list) or not all(isinstance(a, str) for a in axioms):
            return verdict(Status.SERVER_ERROR, f"the checker reported no axioms for {name}")
        bad = sorted(set(axioms) - STANDARD_AXIOMS)
        if bad:
            return verdict(
                Status.SORRY,
                f"'{name}' depends on non-standard axioms: {', '.join(bad)}",
                tuple(sorted(axioms)),
            )
        found_axioms.update(axioms)
    return verdict(Status.VALID, "", tuple(sorted(found_axioms)))


def _last_json_line(output: str) -> Any:
    for line in reversed(output.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                return None
    return None


def tail_of(text: str, limit: int = 2000) -> str:
    """The last ``limit`` characters of a tool's output (where its error is), marked cut."""
    text = text.strip()
    return text if len(text) <= limit else "..." + text[-limit:]


@dataclass(frozen=True)
class KernelChecker:
    """How to compile a module and run one checker in a workspace.

    ``lean``: the command that runs the workspace's ``lean`` (``lake env lean``). ``run``: the
    checker's command prefix - gapscope's takes ``<folder> <challenge> <solution> <names...>``
    and prints one JSON report; SafeVerify takes ``<challenge.olean> <solution.olean>`` and
    exits 0 when the solution passes.
    """

    name: Checker
    lean: tuple[str, ...]
    run: tuple[str, ...]

    def check(
        self,
        project: Path,
        header: str,
        challenge: str,
        solution: str,
        names: Sequence[str],
        timeout_s: float,
        sandboxed: bool,
        messages: tuple[LeanMessage, ...] = (),
    ) -> LeanVerdict:
        """The checker's verdict on ``solution`` against ``challenge`` (``messages``: what
        the REPL said of the solution, kept on the verdict for the record)."""
        start = time.monotonic()
        deadline = start + timeout_s
        scratch = Path(tempfile.mkdtemp(prefix="gapscope-kernel-"))
        try:
            verdict = self._check_in(
                scratch, project, header, challenge, solution, names, deadline, sandboxed
            )
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return LeanVerdict(
            verdict.status,
            messages,
            time.monotonic() - start,
            verdict.axioms,
            verdict.detail,
            checker=self.name,
        )

    def _check_in(
        self,
        scratch: Path,
        project: Path,
        header: str,
        challenge: str,
        solution: str,
        names: Sequence[str],
        deadline: float,
        sandboxed: bool,
    ) -> LeanVerdict:
        def bounded(argv: Sequence[str]) -> Run:
            wrapped = sandbox_argv(argv, project, writable=(scratch,)) if sandboxed else argv
            return run_bounded(wrapped, project, deadline - time.monotonic())

        sources = {CHALLENGE_MODULE: challenge, SOLUTION_MODULE: solution}
        for module, text in sources.items():
            (scratch / f"{module}.lean").write_text(f"{header}\n\n{text}\n", encoding="utf-8")
            built = bounded(
                [
                    *self.lean,
                    f"--root={scratch}",
                    "-o",
                    str(scratch / f"{module}.olean"),
                    str(scratch / f"{module}.lean"),
                ]
            )
            if built.code is None:
                return LeanVerdict(Status.TIMEOUT, detail=f"compiling {module} timed out")
            if built.code != 0:
                status = Status.SERVER_ERROR if module == CHALLENGE_MODULE else Status.LEAN_ERROR
                return LeanVerdict(
                    status, detail=f"compiling {module} failed: {tail_of(built.output)}"
                )
        if self.name is Checker.SAFEVERIFY:
            done = bounded(
                [
                    *self.run,
                    str(scratch / f"{CHALLENGE_MODULE}.olean"),
                    str(scratch / f"{SOLUTION_MODULE}.olean"),
                ]
            )
            if done.code is None:
                return LeanVerdict(Status.TIMEOUT, detail="SafeVerify timed out")
            if done.code != 0:
                return LeanVerdict(
                    Status.LEAN_ERROR, detail=f"SafeVerify rejected: {tail_of(done.output)}"
                )
            return LeanVerdict(Status.VALID, detail="SafeVerify accepted")
        done = bounded([*self.run, str(scratch), CHALLENGE_MODULE, SOLUTION_MODULE, *names])
        if done.code is None:
            return LeanVerdict(Status.TIMEOUT, detail="the kernel checker timed out")
        report = _last_json_line(done.output)
        if report is None:
            return LeanVerdict(
                Status.SERVER_ERROR,
                detail=f"the kernel checker printed no report (exit {done.code}): "
                f"{tail_of(done.output)}",
            )
        return judge_report(report, names, 0.0)


def find_kernel_checker(project: Path) -> KernelChecker | None:
    """SafeVerify built in ``project``, else gapscope's checker (built there, or interpreted
    from the installed package); None without ``lake``."""
    if shutil.which("lake") is None:
        return None
    lean = ("lake", "env", "lean")
    safeverify = _first_file(project, SAFEVERIFY_BINARIES)
    if safeverify is not None:
        return KernelChecker(Checker.SAFEVERIFY, lean, ("lake", "env", str(safeverify)))
    built = project / ".lake" / "build" / "bin" / GAPSCOPE_EXE
    if built.is_file():
        return KernelChecker(Checker.GAPSCOPE, lean, ("lake", "env", str(built)))
    return KernelChecker(Checker.GAPSCOPE, lean, (*lean, "--run", str(checker_source())))
