"""The environment every process that runs model-written Lean gets: an allow-list, never ours.

The REPL, comparator and T2's ``lake`` builds elaborate model-written code, and Lean can read
its own process's environment (``IO.getEnv``, ``/proc/self/environ``); whatever it reads can
come back in a message that lands in the evaluation log. The evaluating process holds API keys
in its environment, so those children start from this allow-list - what elan, Lake and Lean
need to find the toolchain and the packages - plus what the caller adds explicitly (the
kernel checker's ``COMPARATOR_*`` paths, a built ``LEAN_PATH``). ``$GAPSCOPE_LEAN_PASS_ENV``
(names or shell patterns such as ``MY_TOOL_*``, comma-separated) passes more through for an
unusual toolchain set-up.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from fnmatch import fnmatchcase

ENV_PASS = "GAPSCOPE_LEAN_PASS_ENV"

ALLOWED_NAMES = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LANG",
        "LC_ALL",
        "LC_CTYPE",
        "TMPDIR",
        "LD_LIBRARY_PATH",
        "ELAN_HOME",
        "ELAN_TOOLCHAIN",
        "LEAN_PATH",
        "LEAN_SRC_PATH",
        "LEAN_SYSROOT",
        "LEAN_CC",
        "LAKE",
        "LAKE_HOME",
        "LAKE_OVERRIDE_LEAN",
        "LAKE_PKG_URL_MAP",
        "LAKE_NO_CACHE",
        "LAKE_ARTIFACT_CACHE",
        "LAKE_CACHE_DIR",
        "COMPARATOR_LEAN4EXPORT",
        "COMPARATOR_LANDRUN",
    }
)
"""Names a Lean toolchain reads (elan, Lake, Lean, comparator) and nothing secret."""


def _passed(name: str, patterns: list[str]) -> bool:
    return name in ALLOWED_NAMES or any(fnmatchcase(name, p) for p in patterns)


def child_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a child that runs model-written code: the allowed names of ours
    (with those ``$GAPSCOPE_LEAN_PASS_ENV`` adds), then ``extra`` (which wins)."""
    patterns = [p.strip() for p in os.environ.get(ENV_PASS, "").split(",") if p.strip()]
    return {**{k: v for k, v in os.environ.items() if _passed(k, patterns)}, **(extra or {})}
