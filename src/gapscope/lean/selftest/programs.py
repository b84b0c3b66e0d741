"""The Lean programs gapscope ships, compiled by the self-test, and their part of its key.

gapscope ships Lean source that no Lean has compiled where it is developed (O-NNG's
``library.lean``, T2's tracer ``GapscopeMine.lean``, ...). The self-test compiles every
``*.lean`` file under the package - so a new one is covered without a list to keep - with the
workspace's own toolchain (``lake env lean FILE``, sandboxed as the REPL is), and their bytes
join the source the installation key hashes: a changed program voids a pass.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from gapscope.lean.kernel import run_bounded, tail_of
from gapscope.lean.sandbox import sandbox_argv
from gapscope.lean.selftest.cases import source_hash

COMPILE_PATH = "lake-env-lean"
"""The path label a shipped program's compile is listed under in the self-test's results."""

_ERROR_LINE = re.compile(r"^.*:\d+:\d+: error\b.*$|^error:.*$", re.MULTILINE)


@dataclass(frozen=True)
class Compiled:
    """One program's compile: ``status`` (``compiled``, ``lean_error``, ``timeout``), and in
    ``detail`` Lean's first error line (or the output's tail) when it failed."""

    ok: bool
    status: str
    detail: str


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


def compile_program(path: Path, project: Path, sandboxed: bool, timeout_s: float) -> Compiled:
    """``lake env lean path`` in ``project``: it fails on a non-zero exit or an error line
    (warnings are fine), on a timeout, or when ``lake`` cannot be run."""
    if shutil.which("lake") is None:
        return Compiled(False, "lean_error", "`lake` is not on PATH: nothing was compiled")
    command = ["lake", "env", "lean", str(path)]
    if sandboxed:
        command = sandbox_argv(command, project)
    try:
        done = run_bounded(command, project, timeout_s)
    except OSError as exc:
        return Compiled(False, "lean_error", f"cannot run {command[0]}: {exc}")
    if done.code is None:
        return Compiled(False, "timeout", f"not compiled after {timeout_s:.0f} s")
    error = _ERROR_LINE.search(done.output)
    if done.code == 0 and error is None:
        return Compiled(True, "compiled", "")
    first = error.group(0) if error else f"exit {done.code}: {tail_of(done.output, 500)}"
    return Compiled(False, "lean_error", first.strip())
