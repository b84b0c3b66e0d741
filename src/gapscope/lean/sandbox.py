"""Run model-written Lean only inside a bubblewrap sandbox: no network, nothing writable but
/tmp (and the folders a build must write, named by the caller).

The command screen (``gapscope.lean.screen``) keeps ``#eval`` and friends out of model output,
but a filter is never complete: an imported library can add commands, and Lean's
metaprogramming is rich. So the REPL that elaborates model-written code runs under Debian's
``bubblewrap`` (``bwrap``) when it is installed: every namespace unshared (no network, its own
PIDs), every capability dropped (as root, the sandbox's user namespace would otherwise let
it remount a read-only bind read-write), the whole filesystem mounted read-only, a private
``/dev`` read-only too (:data:`READ_ONLY_DEV`), a private in-memory ``/tmp`` (``TMPDIR``) of
at most :data:`SANDBOX_TMP_MB`, and the process killed with its parent. The Lean project,
and any program or file the command names that lives under ``/tmp`` (a virtualenv in a
checkout under ``/tmp``, say), are mounted read-only again after the ``/tmp`` mount, so they
stay visible. Files stay readable: the sandbox stops damage and exfiltration over the
network, not reading (see docs/lean.md).

Fail closed: :func:`require_sandbox` is the one decision every local runner of untrusted code
(the REPL pool, the kernel checker, T2's ``lake`` calls, the code pilot's attempts) takes.
Without a working bubblewrap it raises :class:`SandboxUnavailable` with the fix, unless the
user explicitly allowed unsandboxed checking (``allow_unsandboxed``), which is logged and
recorded in every verdict.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from gapscope.lean.backend import LeanUnavailable
from gapscope.lean.bounding import Containment, containment
from gapscope.lean.childenv import child_environment
from gapscope.lean.flags import env_flag

BWRAP = "bwrap"
INSTALL_HINT = "apt-get install bubblewrap (Debian/Ubuntu) to run model-written code sandboxed"
ALLOW_HINT = (
    "or, to run model-written code on this host without a sandbox at your own risk, pass "
    "allow_unsandboxed=True (inspect eval: -T allow_unsandboxed=true; gapscope: "
    "--allow-unsandboxed)"
)


READ_ONLY_DEV = ("--dev", "/dev", "--remount-ro", "/dev")
"""bubblewrap's private ``/dev``, remounted read-only: alone, ``--dev`` is a writable tmpfs
of half the host's memory (``/dev/shm`` a folder in it), where sandboxed code could put far
more than any file or folder cap allows. Device nodes (``/dev/null``, ``/dev/urandom``) keep
working: a read-only mount stops new files, not writes to a device. Every sandbox of untrusted
code mounts its ``/dev`` with these arguments (the Lean one and the code pilot's)."""


def sized_tmpfs(folder: str, size_mb: int) -> list[str]:
    """bubblewrap's arguments mounting a fresh tmpfs of at most ``size_mb`` MB at ``folder``
    (``--size``, bubblewrap 0.5 or later, before its ``--tmpfs``). Alone, a tmpfs may grow to
    half the host's memory, and where no cgroup counts the sandbox's memory (the uid
    fallback) nothing else stops files written there. Every tmpfs of a sandbox of untrusted
    code is mounted with these arguments (the Lean one's ``/tmp``, the code pilot's
    ``/attempt`` and the empty folders it covers)."""
    return ["--size", str(size_mb * 2**20), "--tmpfs", folder]


SANDBOX_TMP_MB = 256
"""The size of the Lean sandbox's private ``/tmp``. Lean and ``lake`` need next to nothing
there: a build writes the project's ``.lake``, a kernel check its scratch folder, a REPL
nothing; the cap only keeps sandboxed code from filling the host's memory with files."""


ENV_ALLOW_UNSANDBOXED = "GAPSCOPE_LEAN_ALLOW_UNSANDBOXED"
"""Set to ``1`` (or ``true``) to allow unsandboxed checking without passing the option (for
Ray actors and scripted runs); anything else, or unset, leaves the default: refuse."""


ENV_SANDBOX = "GAPSCOPE_LEAN_SANDBOX"
_SANDBOX_VALUES = {"on": True, "1": True, "off": False, "0": False, "auto": None}


def sandbox_choice() -> bool | None:
    """``$GAPSCOPE_LEAN_SANDBOX``: ``on`` (True), ``off`` (False), ``auto``/unset (None)."""
    choice = os.environ.get(ENV_SANDBOX, "auto").strip().lower()
    if choice not in _SANDBOX_VALUES:
        raise ValueError(f"{ENV_SANDBOX} must be on, off or auto, got {choice!r}")
    return _SANDBOX_VALUES[choice]


def unsandboxed_allowed(explicit: bool = False) -> bool:
    """Whether the user allowed unsandboxed runs: the option or the environment variable."""
    return explicit or env_flag(ENV_ALLOW_UNSANDBOXED)


class SandboxUnavailable(LeanUnavailable):
    """Untrusted Lean would have to run unsandboxed and the user did not allow it (a kind of
    "no usable Lean here", so every caller that reports LeanUnavailable reports this too)."""


def _under_tmp(command: Sequence[str], root: str) -> list[str]:
    """The top folders under ``/tmp`` that the command's program, its absolute arguments or
    the project live in: hidden by the private ``/tmp`` unless mounted again."""
    tmp = Path("/tmp")
    program = (shutil.which(command[0]) or command[0]) if command else ""
    paths = [root, program, *command[1:]]
    tops: dict[str, None] = {}
    for text in paths:
        if not text or not text.startswith("/"):
            continue
        path = Path(text)
        if path.is_relative_to(tmp) and path != tmp and path.exists():
            tops[str(tmp / path.relative_to(tmp).parts[0])] = None
    return list(tops)


def sandbox_argv(
    command: Sequence[str],
    project: Path,
    bwrap: str = BWRAP,
    writable: Sequence[Path] = (),
    env: Mapping[str, str] | None = None,
) -> list[str]:
    """``command`` wrapped to run sandboxed with ``project`` as its working directory;
    ``writable`` folders (a build's output, a check's scratch folder) are bound read-write,
    after every read-only mount, so nothing else becomes writable. Its environment is cleared
    and rebuilt from :func:`child_environment` (with ``env`` added), whatever bwrap itself
    was started with."""
    root = str(Path(project).resolve())
    tops = _under_tmp(command, root)
    visible = [arg for path in (*tops, root) for arg in ("--ro-bind", path, path)]
    for folder in writable:
        path = str(Path(folder).resolve())
        visible += ["--bind", path, path]
    setenv = [
        arg for name, value in child_environment(env).items() for arg in ("--setenv", name, value)
    ]
    return [
        bwrap,
        "--ro-bind", "/", "/",
        *READ_ONLY_DEV,
        "--proc", "/proc",
        *sized_tmpfs("/tmp", SANDBOX_TMP_MB),
        *visible,
        "--unshare-all",
        "--cap-drop", "ALL",
        "--die-with-parent",
        "--clearenv",
        *setenv,
        "--setenv", "TMPDIR", "/tmp",
        "--chdir", root,
        "--",
        *command,
    ]  # fmt: skip


def nproc_limited(command: Sequence[str], processes: int) -> list[str]:
    """``command`` under ``RLIMIT_NPROC`` = ``processes`` (util-linux ``prlimit``), set
    inside the sandbox so the kernel counts it in the sandbox's user namespace: the processes
    and threads of that REPL or check, not every process of the user (Linux 5.14 and later)."""
    return ["prlimit", f"--nproc={processes}:{processes}", "--", *command]


REACHABLE = (
    'test -x "$(command -v "$1")" && cd "$2" || { echo "cannot reach $1 or $2" >&2; exit 1; }; '
    'shift 2; for f; do test -r "$f" || { echo "cannot read $f" >&2; exit 1; }; done'
)
"""The fallback's probe: the program is found and executable, the project a folder it can
enter, and every file the command names readable (an elan toolchain, a REPL binary or a
Python installation under root's home is none of these, to uid 65534)."""


def lean_containment(
    command: Sequence[str] = ("/bin/true",),
    project: Path = Path("/"),
    env: Mapping[str, str] | None = None,
) -> Containment:
    """What holds a sandboxed Lean ``command`` with all it starts
    (:mod:`gapscope.lean.bounding`), the fallback probed with this sandbox running ``prlimit``
    and checking that its uid reaches ``command``'s program, ``project`` and every existing
    file or folder ``command`` names by its absolute path."""
    bwrap = shutil.which(BWRAP)
    if bwrap is None:
        return containment(None)
    root = str(Path(project).resolve())
    named = [arg for arg in command[1:] if arg.startswith("/") and os.path.exists(arg)]
    probe = ["/bin/sh", "-c", REACHABLE, "probe", command[0], root, *named]
    return containment(sandbox_argv(nproc_limited(probe, 64), Path(root), bwrap, env=env))


@dataclass(frozen=True)
class SandboxStatus:
    """Whether REPLs can run sandboxed here, and what was found (or what is missing)."""

    available: bool
    detail: str


@cache
def sandbox_status() -> SandboxStatus:
    """Whether ``bwrap`` is installed and can build the sandbox here (it needs user
    namespaces, which some containers deny): probed once by sandboxing ``true``."""
    path = shutil.which(BWRAP)
    if path is None:
        return SandboxStatus(False, "bubblewrap (bwrap) not found")
    try:
        done = subprocess.run(
            sandbox_argv(["true"], Path("/"), path), capture_output=True, text=True, timeout=20
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return SandboxStatus(False, f"{path} cannot run: {exc}")
    if done.returncode != 0:
        return SandboxStatus(False, f"{path} cannot build the sandbox: {done.stderr.strip()}")
    return SandboxStatus(True, f"{path}: no network, read-only filesystem and /dev, private /tmp")


def require_sandbox(
    allow_unsandboxed: bool, what: str = "Lean", status: SandboxStatus | None = None
) -> bool:
    """Whether to sandbox (True) - the only answer unless ``allow_unsandboxed``.

    SandboxUnavailable (naming the install line and the explicit opt-out) when bubblewrap
    does not work here and the user did not allow unsandboxed runs; with the opt-out, False
    and a warning: ``what`` (the model's code) then runs on this host as it is. ``status`` is
    the probe of the sandbox ``what`` runs in (default: Lean's, :func:`sandbox_status`); the
    code pilot passes its own, whose mounts differ.
    """
    status = status or sandbox_status()
    if status.available:
        return True
    if not allow_unsandboxed:
        raise SandboxUnavailable(
            f"refusing to run {what} without a sandbox: {status.detail}. Install it: "
            f"{INSTALL_HINT}; {ALLOW_HINT}."
        )
    logging.getLogger(__name__).warning(
        "%s runs WITHOUT a sandbox (%s), as allowed by allow_unsandboxed; %s.",
        what,
        status.detail,
        INSTALL_HINT,
    )
    return False


def decide_sandbox(requested: bool | None, allow_unsandboxed: bool, what: str) -> bool:
    """Whether to sandbox ``what``. None: yes, refusing where bubblewrap does not work unless
    ``allow_unsandboxed`` (:func:`require_sandbox`). True: insist whatever the opt-out says.
    False: never - only together with ``allow_unsandboxed`` (ValueError otherwise)."""
    if requested is False:
        if not allow_unsandboxed:
            raise ValueError(
                f"sandbox=False runs {what} unsandboxed; it needs allow_unsandboxed=True as well"
            )
        return False
    return require_sandbox(allow_unsandboxed and not requested, what)
