"""What Lean tooling this machine has, each finding with what to do when it is missing."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from gapscope.lean.backend import LeanUnavailable
from gapscope.lean.kimina import KiminaBackend
from gapscope.lean.local import REPL_BINARY_CANDIDATES, find_repl_binary, read_toolchain
from gapscope.lean.sandbox import INSTALL_HINT, sandbox_status

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
    """Whether local REPLs will run sandboxed (bubblewrap installed and working)."""
    status = sandbox_status()
    fix = "" if status.available else INSTALL_HINT
    return Finding("sandbox", status.available, status.detail, fix)


def project_findings(project: Path) -> list[Finding]:
    """The project's toolchain pin and built REPL."""
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
