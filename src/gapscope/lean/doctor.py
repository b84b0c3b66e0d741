"""What Lean tooling this machine has, each finding with what to do when it is missing."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from gapscope.lean.backend import LeanUnavailable
from gapscope.lean.kernel import find_comparator, find_kernel_checker
from gapscope.lean.kimina import KiminaBackend
from gapscope.lean.local import REPL_BINARY_CANDIDATES, find_repl_binary, read_toolchain
from gapscope.lean.sandbox import ALLOW_HINT, INSTALL_HINT, sandbox_status

ELAN_INSTALL = (
    "curl https://raw.githubusercontent.com/leanprover/elan/master/elan-init.sh -sSf | sh"
)


@dataclass(frozen=True)
class Finding:
    """One check: its name, whether it passed, what was found, and the fix if it did not."""

    name: str
    ok: bool
    found: str
    fix: str = ""


def _version(tool: str) -> str:
    try:
        done = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"(version unknown: {exc})"
    return (
        (done.stdout or done.stderr).strip().splitlines()[0] if done.stdout or done.stderr else ""
    )


def tool_findings() -> list[Finding]:
    """elan, lean and lake on PATH, with their versions."""
    findings = []
    for tool in ("elan", "lean", "lake"):
        path = shutil.which(tool)
        found = f"{path} {_version(tool)}".strip() if path else "not on PATH"
        findings.append(
            Finding(tool, path is not None, found, "" if path else f"install elan: {ELAN_INSTALL}")
        )
    return findings


def sandbox_finding() -> Finding:
    """Whether local checks can run: they run sandboxed or, without a working bubblewrap,
    not at all unless unsandboxed checking is explicitly allowed."""
    status = sandbox_status()
    if status.available:
        return Finding("sandbox", True, status.detail)
    found = f"{status.detail}; local Lean backends and T2's repository track refuse to start"
    return Finding("sandbox", False, found, f"{INSTALL_HINT}; {ALLOW_HINT}")


def kernel_checker_finding(project: Path) -> Finding:
    """Which out-of-environment kernel checker settles VALID verdicts in ``project``."""
    checker = find_kernel_checker(project)
    comparator = find_comparator(project)
    note = (
        f"; comparator at {comparator} is not run by gapscope (it builds its own modules)"
        if comparator
        else ""
    )
    if checker is None:
        return Finding(
            "kernel checker",
            False,
            "none (no lake on PATH): official theorems are judged by the REPL's replay alone "
            "(verdicts marked repl-text)" + note,
            f"install elan ({ELAN_INSTALL}), then `gapscope lean setup {project} --force`",
        )
    how = " ".join(checker.run[-2:]) if checker.run[-2] == "--run" else checker.run[-1]
    untested = " (untested against a real Lean)" if checker.name.value == "gapscope" else ""
    return Finding("kernel checker", True, f"{checker.name.value}: {how}{untested}{note}")


def project_findings(project: Path) -> list[Finding]:
    """The project's toolchain pin, built REPL and kernel checker."""
    if not project.is_dir():
        return [
            Finding("project", False, f"{project} does not exist", f"gapscope lean setup {project}")
        ]
    pinned = (project / "lean-toolchain").is_file()
    binary = find_repl_binary(project)
    return [
        Finding(
            "toolchain",
            pinned,
            read_toolchain(project) if pinned else "no lean-toolchain",
            "" if pinned else f"gapscope lean setup {project} --force",
        ),
        Finding(
            "repl",
            binary is not None,
            str(binary) if binary else f"none of {', '.join(REPL_BINARY_CANDIDATES)}",
            "" if binary else f"cd {project} && lake update && lake build REPL/repl",
        ),
        kernel_checker_finding(project),
    ]


def kimina_finding(url: str) -> Finding:
    """Whether a kimina-lean-server answers its health check at ``url``."""
    backend = KiminaBackend(url)
    try:
        backend.health()
    except LeanUnavailable as exc:
        return Finding(
            "kimina", False, str(exc), "start kimina-lean-server or pass the right --kimina-url"
        )
    finally:
        backend.close()
    return Finding("kimina", True, f"{url} healthy")
