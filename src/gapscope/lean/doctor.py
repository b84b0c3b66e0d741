"""What Lean tooling this machine has, each finding with what to do when it is missing."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from gapscope.lean.backend import LeanUnavailable
from gapscope.lean.bounded import LAKE_CALL, run_bounds
from gapscope.lean.bounding import CGROUP_FIX
from gapscope.lean.factory import ENV_REPL_COMMAND, kernel_checker_choice
from gapscope.lean.kernel import find_kernel_checker, kernel_checker_missing
from gapscope.lean.kimina import KiminaBackend
from gapscope.lean.landlock import landlock_abi
from gapscope.lean.local import (
    DEFAULT_MAX_RSS_MB,
    REPL_BINARY_CANDIDATES,
    LocalBackend,
    find_repl_binary,
    read_toolchain,
    repl_bounds,
)
from gapscope.lean.sandbox import (
    ALLOW_HINT,
    INSTALL_HINT,
    SandboxUnavailable,
    sandbox_choice,
    sandbox_status,
    unsandboxed_allowed,
)
from gapscope.lean.selftest.record import load_records

ELAN_INSTALL = (
    "curl https://raw.githubusercontent.com/leanprover/elan/master/elan-init.sh -sSf | sh"
)


@dataclass(frozen=True)
class Finding:
    """One check: its name, whether it passed, what was found, the fix if it did not, and
    what a script may read (``data``: the self-test key's binaries, in ``--json``)."""

    name: str
    ok: bool
    found: str
    fix: str = ""
    data: Mapping[str, object] = field(default_factory=dict)


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


def _limits_finding(
    name: str,
    unit: str,
    command: Sequence[str],
    project: Path,
    env: Mapping[str, str] | None = None,
) -> Finding:
    """What holds one ``unit`` running ``command`` in ``project``, with everything it starts,
    at the default limits: its own cgroup, RLIMIT_NPROC under an unprivileged uid, or nothing
    and why (``gapscope.lean.bounded``, probed as a run probes it)."""
    if not sandbox_status().available:
        return Finding(name, False, f"nothing per {unit} (unsandboxed)", INSTALL_HINT)
    held = run_bounds(unit, repl_bounds(DEFAULT_MAX_RSS_MB), True, command, project, env)
    assert held.containment is not None  # sandboxed and bounded: probed
    ok = held.containment.cgroups is not None
    data = {"mechanism": held.containment.mechanism}
    return Finding(name, ok, held.describe(), "" if ok else CGROUP_FIX, data)


def repl_limits_finding() -> Finding:
    """What holds one local REPL with everything it starts, at the default limits."""
    return _limits_finding("Lean REPL limits (defaults)", "REPL", ("/bin/true",), Path("/"))


def build_limits_finding() -> Finding:
    """What holds one ``lake`` call of T2's repository track (``lake env lean``, ``lake
    build``), at the default limits (a REPL's), probed with the ``lake`` on PATH."""
    lake = shutil.which("lake") or "/bin/true"
    return _limits_finding("T2 lake build limits (defaults)", LAKE_CALL, (lake,), Path("/"))


def kernel_checker_finding(project: Path) -> Finding:
    """Whether comparator can judge in ``project``: its binary, lean4export, landrun, lake."""
    missing = kernel_checker_missing(project)
    if missing:
        return Finding(
            "kernel checker",
            False,
            f"comparator cannot run, missing: {', '.join(missing)}; official theorems are "
            "judged by the REPL alone (verdicts marked repl-text, see docs/lean.md)",
            f"gapscope lean setup {project} --force --checker comparator, then the commands "
            "it prints",
        )
    checker = find_kernel_checker(project)
    found = f"comparator at {checker.revision}" if checker else "comparator"
    if checker is not None:  # what a check would be held to, or why nothing holds it
        limits = _limits_finding("", "kernel check", checker.run, project, checker.env)
        found = f"{found}; {limits.found}"
    abi = landlock_abi()
    if abi:
        confined = f"Landlock ABI {abi}: landrun confines comparator's builds"
        found = f"{found} (built; {confined}; see the self-test)"
        return Finding("kernel checker", True, found, data={"landlock_abi": abi})
    ok = sandbox_status().available
    confined = "no Landlock on this kernel: landrun --best-effort confines nothing, so " + (
        "comparator runs only inside bubblewrap" if ok else "comparator checks are refused"
    )
    fix = "" if ok else f"{INSTALL_HINT}, or use a kernel with Landlock (Linux >= 5.13)"
    return Finding("kernel checker", ok, f"{found} (built; {confined})", fix, {"landlock_abi": 0})


def selftest_finding(project: Path) -> Finding:
    """Whether the known-answer self-test passed for this installation (the REPL path and
    the checker that local verdicts would use); nothing is run here."""
    command = os.environ.get(ENV_REPL_COMMAND)
    repl = shlex.split(command) if command else None
    checker = kernel_checker_choice()
    try:
        try:  # the sandbox a run would get: the key differs sandboxed and not
            backend = LocalBackend(
                project, repl_command=repl, kernel_checker=checker, sandbox=sandbox_choice(),
                allow_unsandboxed=unsandboxed_allowed(),
            )  # fmt: skip
        except SandboxUnavailable:
            backend = LocalBackend(
                project, repl_command=repl, kernel_checker=checker, sandbox=False,
                allow_unsandboxed=True,
            )  # fmt: skip
    except LeanUnavailable as exc:
        return Finding("selftest", False, f"cannot be run: {exc}", f"gapscope lean setup {project}")
    try:
        key = backend.installation
        record = load_records(project).get(key.digest)
    finally:
        backend.close()
    fix = f"gapscope lean selftest {project}"
    judges = ", ".join(key.judges)
    data = {"digest": key.digest, **asdict(key)}
    if not isinstance(record, dict):
        return Finding("selftest", False, f"not run for {judges} at {key.toolchain}", fix, data)
    results = record.get("results", [])
    failed = [f"{r['case']}@{r['path']}" for r in results if r.get("ok") is False]
    if record.get("passed") is not True:
        found = f"FAILED for {judges} ({record.get('at')}): {', '.join(failed)}"
        return Finding("selftest", False, found, fix, data)
    found = f"passed for {judges} at {key.toolchain} ({record.get('at')})"
    return Finding("selftest", True, found, data=data)


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
        selftest_finding(project),
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
