"""The bytes a Lean verdict depends on: sha256 of every program the judge runs, cheaply.

A self-test pass certifies programs, not names: the REPL behind ``lake env .../repl`` can be
rebuilt, ``lean``/``lake`` change under an unchanged ``lean-toolchain`` pin (``stable`` after
``elan update``), and comparator, lean4export or landrun can be replaced in place. So the
installation key (``gapscope.lean.selftest.record``) holds the sha256 of each, as resolved
when the backend opens, and any change means "not tested".

Hashing a toolchain's ``lean`` (~200 MB) at every backend open would cost seconds, so digests
are cached per process by (path, inode, size, mtime): a file is re-read only when one of them
changes - which every rewrite, copy-over or rebuild does.

``lean`` and ``lake`` are resolved through ``lean --print-prefix`` run in the project (elan's
proxy on PATH is the same few bytes whatever toolchain it starts; the prefix's ``bin/`` holds
the toolchain's own binaries), and ``lean --version`` is recorded with them.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import threading
from collections.abc import Iterable
from pathlib import Path

ABSENT = "absent"
_cache: dict[tuple[str, int, int, int], str] = {}
_versions: dict[str, str] = {}
_lock = threading.Lock()


def file_sha256(path: Path) -> str:
    """sha256 of ``path``'s bytes, read again only when its path, inode, size or mtime
    changed since the last call in this process."""
    resolved = path.resolve()
    stat = resolved.stat()
    key = (str(resolved), stat.st_ino, stat.st_size, stat.st_mtime_ns)
    with _lock:
        known = _cache.get(key)
    if known is not None:
        return known
    digest = hashlib.sha256()
    with resolved.open("rb") as handle:
        for block in iter(lambda: handle.read(2**20), b""):
            digest.update(block)
    with _lock:
        _cache[key] = digest.hexdigest()
    return digest.hexdigest()


def identify(path: Path | str | None) -> str:
    """``<resolved path>#<sha256>``, or ``absent`` when there is no such file."""
    if path is None or not Path(path).is_file():
        return ABSENT
    return f"{Path(path).resolve()}#{file_sha256(Path(path))}"


def _run(argv: list[str], cwd: Path) -> str | None:
    try:
        done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def toolchain_binaries(project: Path) -> dict[str, str]:
    """``lean``, ``lake`` (from the toolchain's prefix) and ``lean --version``."""
    if shutil.which("lean") is None:
        return {"lean": ABSENT, "lean --version": ABSENT, "lake": identify(shutil.which("lake"))}
    prefix = _run(["lean", "--print-prefix"], project)
    lean = Path(prefix) / "bin" / "lean" if prefix else Path(str(shutil.which("lean")))
    lake = Path(prefix) / "bin" / "lake" if prefix else shutil.which("lake")
    found = {"lean": identify(lean), "lake": identify(lake)}
    digest = found["lean"]
    with _lock:
        version = _versions.get(digest)
    if version is None:
        version = _run([str(lean), "--version"], project) or ABSENT
        with _lock:
            _versions[digest] = version
    return {**found, "lean --version": version}


def command_binaries(argv: Iterable[str]) -> str:
    """Every file a stand-in REPL command names (an interpreter and its script), hashed."""
    files = [Path(arg) for arg in argv if "/" in arg and Path(arg).is_file()]
    return " ".join(identify(f) for f in files) or ABSENT
