"""How a per-check judge project finds the workspace's packages: real ``require``s, offline.

comparator builds the challenge and the solution with ``lake build`` under landrun, which
passes the child nothing but ``PATH``, ``HOME`` and ``LEAN_ABORT_ON_PANIC`` (comparator
``Main.lean`` ``safeLakeBuild`` at 5d21b89). A ``LEAN_PATH`` set around comparator never
reaches that build, so ``import Mathlib`` can only resolve through the judge project's own
lake configuration. This module writes it:

- a ``[[require]]`` with a ``path`` source for each package the workspace itself requires
  (its manifest's entries that are not ``inherited``), the checker's own tools (the REPL,
  comparator, lean4export) excepted: a header imports libraries, not them;
- a ``lake-manifest.json`` that locks *every* package the workspace resolved (transitive ones
  too: Mathlib's batteries, aesop, ...) as a ``path`` entry pointing at the directory the
  workspace already fetched and built.

Why a manifest of path entries: ``lake build`` with a manifest calls
``Workspace.materializeDeps`` (lake ``src/lake/Lake/Load/Resolve.lean``), which resolves every
dependency - the root's and, recursively, each package's own ``require``s - by *name* in the
root's manifest and errors when one is missing ("dependency 'batteries' of 'mathlib' not in
manifest"); a ``path`` entry is materialized by using its directory as it is
(``PackageEntry.materialize``, ``src/lake/Lake/Load/Materialize.lean``), with no ``git`` and
no network, where a ``git`` entry would be cloned into the judge's own ``.lake/packages``.
Paths are written relative to the judge project because lake joins a path entry's ``dir``
onto the workspace directory. The packages are read where the workspace built them (landrun
mounts ``/`` read-only for the build, ``--ro /`` in ``buildLandrunArgs``), so their builds
must be up to date: a stale one fails the build (``server_error``), it is never rebuilt here.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TOOL_PACKAGES = frozenset({"repl", "comparator", "lean4export"})
"""Packages the workspace requires to *run* checks, never imported by a problem's header."""
MANIFEST = "lake-manifest.json"
_DEFAULT_PACKAGES_DIR = ".lake/packages"


@dataclass(frozen=True)
class LockedPackage:
    """One package of the workspace's manifest: where it lies and how lake found it."""

    name: str
    directory: Path
    direct: bool
    entry: Mapping[str, Any]


def read_manifest(workspace: Path) -> dict[str, Any]:
    """The workspace's ``lake-manifest.json`` (empty when it has none or it is unreadable:
    a workspace that was never ``lake update``d has no packages to lend)."""
    try:
        data = json.loads((workspace / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def locked_packages(workspace: Path) -> list[LockedPackage]:
    """Every package the workspace's manifest locks, tools excepted, with its directory:
    ``<packagesDir>/<name>[/<subDir>]`` for a git entry, ``<dir>`` for a path entry."""
    manifest = read_manifest(workspace)
    packages_dir = workspace / str(manifest.get("packagesDir") or _DEFAULT_PACKAGES_DIR)
    found = []
    entries = manifest.get("packages", [])
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            continue
        name = entry["name"]
        if name.lower() in TOOL_PACKAGES:
            continue
        if entry.get("type") == "path":
            directory = workspace / str(entry.get("dir", ""))
        else:
            directory = packages_dir / name / str(entry.get("subDir") or "")
        found.append(LockedPackage(name, directory, not entry.get("inherited", False), entry))
    return found


def _relative(directory: Path, judge_dir: Path) -> str:
    return Path(os.path.relpath(directory.resolve(), judge_dir.resolve())).as_posix()


def _path_entry(package: LockedPackage, judge_dir: Path) -> dict[str, Any]:
    entry = {
        "type": "path",
        "scope": package.entry.get("scope", ""),
        "name": package.name,
        "manifestFile": package.entry.get("manifestFile", MANIFEST),
        "inherited": not package.direct,
        "dir": _relative(package.directory, judge_dir),
    }
    if "configFile" in package.entry:
        entry["configFile"] = package.entry["configFile"]
    return entry


def judge_requires(workspace: Path, judge_dir: Path) -> tuple[str, str | None]:
    """The ``[[require]]`` blocks of the judge's ``lakefile.toml`` and the text of its
    ``lake-manifest.json`` (None: the workspace requires no library, nothing to lock)."""
    packages = locked_packages(workspace)
    direct = [p for p in packages if p.direct]
    if not direct:
        return "", None
    requires = "".join(
        f'\n[[require]]\nname = "{p.name}"\npath = "{_relative(p.directory, judge_dir)}"\n'
        for p in direct
    )
    manifest = {
        "version": read_manifest(workspace).get("version", 7),
        "packagesDir": _DEFAULT_PACKAGES_DIR,
        "packages": [_path_entry(p, judge_dir) for p in packages],
        "name": "gapscope_judge",
        "lakeDir": ".lake",
    }
    return requires, json.dumps(manifest, indent=1) + "\n"
