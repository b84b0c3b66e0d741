"""Open a backend from a one-line spec, or say exactly what to install.

The floor below ``gapscope.lean.executor``: a diagnostic calls ``open_checker``, which calls
``open_backend`` here (on this machine, or in each Ray actor); nothing here calls back up.

Specs: ``local:/path/to/lean/project`` (REPL processes via ``lake env``) and
``kimina:http://host:port`` (kimina-lean-server). With no spec, ``$GAPSCOPE_LEAN`` is used.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

from gapscope.lean.backend import LeanUnavailable
from gapscope.lean.base import CachedBackend
from gapscope.lean.kimina import KiminaBackend
from gapscope.lean.local import LocalBackend
from gapscope.lean.sandbox import sandbox_choice, unsandboxed_allowed
from gapscope.lean.selftest.record import SelfTestRequired, refusal, untested_allowed

ENV_SPEC = "GAPSCOPE_LEAN"
ENV_REPL_COMMAND = "GAPSCOPE_LEAN_REPL_CMD"
ENV_TOOLCHAIN = "GAPSCOPE_LEAN_TOOLCHAIN"
ENV_API_KEY = "LEAN_SERVER_API_KEY"

NOTHING_CONFIGURED = (
    "No Lean backend is configured, so no proof can be checked. Either\n"
    "  1. install elan (curl https://raw.githubusercontent.com/leanprover/elan/master/"
    "elan-init.sh -sSf | sh), run `gapscope lean setup DIR` and the commands it prints, then "
    f"set {ENV_SPEC}=local:DIR; or\n"
    "  2. start a kimina-lean-server (https://github.com/project-numina/kimina-lean-server) "
    f"and set {ENV_SPEC}=kimina:http://HOST:PORT.\n"
    "`gapscope lean doctor` reports what it finds."
)


def parse_spec(spec: str) -> tuple[str, str]:
    """``kind:target`` -> (kind, target); ValueError naming the accepted forms otherwise."""
    kind, sep, target = spec.partition(":")
    if not sep or kind not in {"local", "kimina"} or not target:
        raise ValueError(
            f"bad Lean backend spec {spec!r}; expected local:/path/to/project or "
            "kimina:http://host:port"
        )
    if kind == "kimina" and not target.startswith(("http://", "https://")):
        raise ValueError(f"kimina spec needs an http(s) URL, got {target!r}")
    return kind, target


ENV_KERNEL_CHECKER = "GAPSCOPE_LEAN_KERNEL_CHECKER"


def kernel_checker_choice() -> str | None:
    """``$GAPSCOPE_LEAN_KERNEL_CHECKER``: ``auto`` (default: comparator where the workspace
    built it, see ``gapscope.lean.kernel``) or ``none`` (the REPL alone, verdicts
    ``repl-text``)."""
    choice = os.environ.get(ENV_KERNEL_CHECKER, "auto").strip().lower()
    if choice not in ("auto", "none"):
        raise ValueError(f"{ENV_KERNEL_CHECKER} must be auto or none, got {choice!r}")
    return "auto" if choice == "auto" else None


def open_backend(
    spec: str | None = None,
    *,
    health_check: bool = True,
    allow_unsandboxed: bool = False,
    allow_untested: bool = False,
    **options: Any,
) -> CachedBackend:
    """The backend ``spec`` (or ``$GAPSCOPE_LEAN``) names; LeanUnavailable if there is none.

    ``options`` go to the backend's constructor (``cache``, ``max_workers``, ...). A local
    backend refuses to start without a working sandbox (SandboxUnavailable, a LeanUnavailable)
    unless ``allow_unsandboxed`` (or ``$GAPSCOPE_LEAN_ALLOW_UNSANDBOXED=1``); it takes its
    REPL command from ``$GAPSCOPE_LEAN_REPL_CMD`` when set and its sandbox choice from
    ``$GAPSCOPE_LEAN_SANDBOX`` (``on``, ``off`` - which also needs ``allow_unsandboxed`` - or
    ``auto``) and its kernel checker from ``$GAPSCOPE_LEAN_KERNEL_CHECKER`` (``auto``/``none``).
    A local backend whose REPL/checker path has not passed the known-answer self-test on this
    installation is refused (SelfTestRequired, a LeanUnavailable: the run stops before any
    model call) unless ``allow_untested`` (or ``$GAPSCOPE_LEAN_ALLOW_UNTESTED=1``); this is
    the one place that gate lives.
    A kimina backend (it sandboxes on the server's side; ``allow_unsandboxed`` does not apply)
    takes its API key from ``$LEAN_SERVER_API_KEY`` and its toolchain label from
    ``$GAPSCOPE_LEAN_TOOLCHAIN``, and is health-checked unless ``health_check=False``.
    """
    spec = spec or os.environ.get(ENV_SPEC, "").strip() or None
    if spec is None:
        raise LeanUnavailable(NOTHING_CONFIGURED)
    kind, target = parse_spec(spec)
    if kind == "local":
        command = os.environ.get(ENV_REPL_COMMAND)
        if command and "repl_command" not in options:
            options["repl_command"] = shlex.split(command)
        options.setdefault("sandbox", sandbox_choice())
        options.setdefault("kernel_checker", kernel_checker_choice())
        local = LocalBackend(
            Path(target).expanduser(),
            allow_unsandboxed=unsandboxed_allowed(allow_unsandboxed),
            **options,
        )
        if not local.selftest and not untested_allowed(allow_untested):
            local.close()
            raise SelfTestRequired(refusal(local.project, local.installation))
        return local
    options.setdefault("api_key", os.environ.get(ENV_API_KEY))
    options.setdefault("toolchain", os.environ.get(ENV_TOOLCHAIN))
    backend = KiminaBackend(target, **options)
    if health_check:
        try:
            backend.health()
        except LeanUnavailable:
            backend.close()
            raise
    return backend
