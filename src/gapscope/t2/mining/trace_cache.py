"""The trace cache: a project is traced once, and a rerun on unchanged sources reuses it.

The key hashes what a trace depends on (every ``.lean`` file, the lake manifest and
toolchain, the tracer); the cache is rewritten after every batch and replaced atomically, so
neither a rerun nor a crash repeats finished work.
"""

from __future__ import annotations

import hashlib
import json
import os
from importlib import resources
from pathlib import Path
from typing import Any

from gapscope.t2.project import lean_files

CACHE_FORMAT = 1
"""Bumped when the cache's layout changes (an older cache is then traced again)."""


def tracer_source() -> Path:
    """gapscope's tracer metaprogram, shipped as package data."""
    return Path(str(resources.files("gapscope.t2.mining") / "GapscopeMine.lean"))


def source_key(project: Path, tracer: bytes | None = None) -> str:
    """A hash of what the trace depends on: every ``.lean`` file (path and bytes, the
    ``lakefile.lean`` too), the lake manifest, toolchain and ``lakefile.toml``, and the tracer
    (``tracer``: what identifies another tracer than gapscope's metaprogram, whose source is
    hashed by default)."""
    digest = hashlib.sha256(tracer if tracer is not None else tracer_source().read_bytes())
    paths = [p.relative_to(project).as_posix() for p in lean_files(project)]
    paths += [
        n
        for n in ("lake-manifest.json", "lean-toolchain", "lakefile.toml")
        if (project / n).is_file()
    ]
    for rel in sorted(paths):
        data = (project / rel).read_bytes()
        digest.update(f"\0{rel}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def read_cache(path: Path, key: str) -> dict[str, list[dict[str, Any]]]:
    """The traced modules of a cache with this key (nothing when it is missing, stale or
    unreadable: the trace is then redone, never guessed)."""
    try:
        cached = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(cached, dict) or cached.get("format") != CACHE_FORMAT:
        return {}
    modules = cached.get("modules")
    if cached.get("key") != key or not isinstance(modules, dict):
        return {}
    return modules


def write_cache(path: Path, key: str, modules: dict[str, Any], failed: dict[str, str]) -> None:
    text = json.dumps(
        {"format": CACHE_FORMAT, "key": key, "modules": modules, "failed": failed}, sort_keys=True
    )
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)  # a crash mid-write leaves the previous cache whole
