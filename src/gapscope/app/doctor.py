"""``gapscope doctor``: what isolation each path that runs model-written code has here.

One line per path, probed now (not read from a configuration): the code pilot's attempts under
bubblewrap, the Inspect sandboxes ``--sandbox`` can send them to, and the Lean checks (local
REPLs, the kernel checker, T2's ``lake``). Where a path would refuse, the fix is printed.
``lean doctor`` goes on to the Lean toolchain itself.
"""

from __future__ import annotations

import importlib.util
import shutil

from gapscope.app.kit import JsonOut, command_output
from gapscope.app.lean import findings_view
from gapscope.lean import (
    ALLOW_HINT,
    CGROUP_FIX,
    INSTALL_HINT,
    Finding,
    build_limits_finding,
    repl_limits_finding,
    sandbox_finding,
)


def code_pilot_finding() -> Finding:
    """``run ladder-code`` with the default ``--sandbox bwrap``: sandboxed, or refused."""
    from gapscope.ladder import bwrap_status

    status = bwrap_status()
    name = "ladder-code (--sandbox bwrap)"
    if status.available:
        return Finding(name, True, f"{status.detail}; judged outside the attempt")
    found = f"{status.detail}; run ladder-code refuses (exit 2) unless --allow-unsandboxed"
    return Finding(name, False, found, f"{INSTALL_HINT}; {ALLOW_HINT}")


def attempt_limits_finding() -> Finding:
    """Whether the code pilot's attempts are bounded whole (a cgroup each), by their process
    count only (rlimits under an unprivileged uid), or per process."""
    from gapscope.ladder import Isolation, Limits, attempt_containment, bounds_in_force

    contained, limits = attempt_containment(Isolation.BWRAP), Limits()
    cgroup = contained.open(limits.bounds())
    try:
        found = bounds_in_force(limits, contained, cgroup, Isolation.BWRAP)
    finally:
        if cgroup is not None:
            cgroup.remove()
    fix = "" if cgroup is not None else CGROUP_FIX
    return Finding("ladder-code attempt limits (defaults)", cgroup is not None, found, fix)


def inspect_sandbox_finding() -> Finding:
    """``run ladder-code --sandbox docker|k8s``: whether their clients are here at all (the
    engine itself is reached only when a run starts, by Inspect)."""
    docker = shutil.which("docker")
    k8s = importlib.util.find_spec("k8s_sandbox") is not None
    found = [f"docker CLI at {docker}" if docker else "no docker CLI on PATH"]
    found.append("k8s: inspect-k8s-sandbox installed" if k8s else "k8s: not installed")
    found.append("each attempt in its sample's container, judged here; local: unsandboxed")
    fix = "" if docker or k8s else "install Docker, or pip install inspect-k8s-sandbox (optional)"
    return Finding("ladder-code (--sandbox docker|k8s)", bool(docker or k8s), "; ".join(found), fix)


def doctor(as_json: JsonOut = False) -> None:
    """Report the isolation of every code-running path: the code pilot (bubblewrap, Inspect
    sandboxes) and the Lean checks. Exits 0."""
    lean = sandbox_finding()
    findings = [
        code_pilot_finding(),
        attempt_limits_finding(),
        inspect_sandbox_finding(),
        Finding("Lean checks (local REPL, kernel checker, T2 lake)", lean.ok, lean.found, lean.fix),
        repl_limits_finding(),
        build_limits_finding(),
    ]
    with command_output("doctor", as_json) as out:
        out.finish(findings_view(findings))
