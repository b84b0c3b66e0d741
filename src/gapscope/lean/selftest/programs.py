"""The Lean programs gapscope ships, compiled by the self-test, and their part of its key.

gapscope ships Lean source that no Lean has compiled where it is developed (O-NNG's
``library.lean``, T2's tracer ``GapscopeMine.lean``, ...). The self-test compiles every
``*.lean`` file under the package - so a new one is covered without a list to keep - with the
workspace's own toolchain (``lake env lean FILE``, sandboxed and bounded as a check's
``lake`` call is), and their bytes
join the source the installation key hashes: a changed program voids a pass. A program whose
output matters is also probed (``Probe``): run on an input whose output is known, and compared.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from gapscope.lean.bounded import LAKE_CALL, run_bounds
from gapscope.lean.cgroup import Bounds
from gapscope.lean.kernel import tail_of
from gapscope.lean.selftest.cases import source_hash

COMPILE_PATH = "lake-env-lean"
"""The path label a shipped program's compile is listed under in the self-test's results."""

_ERROR_LINE = re.compile(r"^.*:\d+:\d+: error\b.*$|^error:.*$", re.MULTILINE)


PROBE_PATH = "known-output"
"""The path label a probe (a shipped program run on an input whose output is known) is listed
under in the self-test's results."""


@dataclass(frozen=True)
class ProgramRun:
    """One program's compile or probe: ``status`` (``compiled``, ``lean_error``, ``timeout``,
    or the probe's own), and in ``detail`` what went wrong (Lean's first error line, the
    output's tail, the difference from the known output) when it failed."""

    ok: bool
    status: str
    detail: str


@dataclass(frozen=True)
class Probe:
    """A shipped program put to an input whose output is known: compiling proves only that
    it compiles (a tracer may compile and print nothing). The package that ships the program
    writes its probe and hands it to the self-test (``gapscope lean selftest`` passes T2's
    tracer probe, ``gapscope.t2.mining.probe``): this floor knows no diagnostic's program.
    ``run(workspace, sandboxed, timeout_s, bounds)`` runs it with the workspace's toolchain,
    each of its ``lake`` calls held to ``bounds`` as a check's are."""

    name: str
    run: Callable[[Path, bool, float, Bounds], ProgramRun]


def shipped_programs() -> dict[str, Path]:
    """Every ``*.lean`` file in the gapscope package, by its path inside the package."""
    root = Path(str(resources.files("gapscope")))
    return {path.relative_to(root).as_posix(): path for path in sorted(root.rglob("*.lean"))}


def key_source(programs: dict[str, Path] | None = None) -> str:
    """The installation key's source hash: the cases and judge sources, and every shipped
    program (name and bytes)."""
    digest = hashlib.sha256(source_hash().encode())
    for name, path in sorted((shipped_programs() if programs is None else programs).items()):
        digest.update(b"\0" + name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def compile_program(
    path: Path, project: Path, sandboxed: bool, timeout_s: float, bounds: Bounds
) -> ProgramRun:
    """``lake env lean path`` in ``project``, held to ``bounds`` as a check's ``lake`` call
    is (:mod:`gapscope.lean.bounded`): it fails on a non-zero exit or an error line (warnings
    are fine), on a timeout, on a limit that stopped it (``server_error``, naming it), or
    when ``lake`` cannot be run."""
    if shutil.which("lake") is None:
        return ProgramRun(False, "lean_error", "`lake` is not on PATH: nothing was compiled")
    command = ["lake", "env", "lean", str(path)]
    held = run_bounds(LAKE_CALL, bounds, sandboxed, command, project)
    try:
        done = held.run(command, project, timeout_s)
    except OSError as exc:
        return ProgramRun(False, "lean_error", f"cannot run {command[0]}: {exc}")
    limit = held.exceeded(done)
    if limit is not None:
        return ProgramRun(False, "server_error", limit)
    if done.code is None:
        return ProgramRun(False, "timeout", f"not compiled after {timeout_s:.0f} s")
    error = _ERROR_LINE.search(done.output)
    if done.code == 0 and error is None:
        return ProgramRun(True, "compiled", "")
    first = error.group(0) if error else f"exit {done.code}: {tail_of(done.output, 500)}"
    return ProgramRun(False, "lean_error", first.strip())
