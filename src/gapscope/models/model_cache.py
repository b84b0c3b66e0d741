"""A verified on-disk cache of converted checkpoints (the embedded models' fp32 copies).

Converting a GGUF takes tens of seconds, so its result is kept under the user cache dir.
A copy is only as good as its files: a disk that filled up, a killed copy or a user's `rm`
can leave a directory that looks like a checkpoint but holds a truncated, empty or
missing weights file, and loading that fails with a safetensors traceback or a
misleading "not in the Hugging Face cache" hint. So every copy carries a manifest
(size and SHA-256 of each file, written last, after the files are complete) and
`cached_build` checks it before handing the directory out; a copy that fails the check
is removed and rebuilt, with a warning that says why.

Hashing a gigabyte on every load would cost seconds, so a file whose size and mtime
still match the manifest is trusted; one whose mtime changed (copied, touched, edited)
is hashed, and passes if the bytes are still the ones recorded.

Copies are built in a staging directory and renamed into place, so a crashed or
concurrent writer never leaves a half-written copy where a reader looks.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MANIFEST = "gapscope-manifest.json"
MANIFEST_FORMAT = 1
STALE_STAGING_S = 3600
"""A conversion takes well under a minute; staging dirs this old belong to dead writers."""
_HASH_BLOCK = 1 << 20

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class FileRecord:
    """What a cached file looked like when the copy was written."""

    size: int
    sha256: str
    mtime_ns: int


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file, read in blocks (the files are hundreds of MB)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(_HASH_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def write_manifest(directory: Path, source: dict[str, str]) -> None:
    """Record every file of a finished copy, and where it came from."""
    files = {}
    for path in sorted(p for p in directory.iterdir() if p.is_file() and p.name != MANIFEST):
        stat = path.stat()
        files[path.name] = {
            "size": stat.st_size,
            "sha256": sha256_file(path),
            "mtime_ns": stat.st_mtime_ns,
        }
    manifest = {"format": MANIFEST_FORMAT, "source": source, "files": files}
    (directory / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


def cache_problem(directory: Path) -> str | None:
    """Why the copy in `directory` cannot be used, or None when it is intact."""
    if not directory.is_dir():
        return "it does not exist"
    try:
        manifest: Any = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
        records = {
            name: FileRecord(int(r["size"]), str(r["sha256"]), int(r["mtime_ns"]))
            for name, r in manifest["files"].items()
        }
    except FileNotFoundError:
        return f"{MANIFEST} is missing (an older or interrupted copy)"
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        return f"{MANIFEST} is unreadable ({type(error).__name__}: {error})"
    if manifest.get("format") != MANIFEST_FORMAT or not records:
        return f"{MANIFEST} has an unknown format"
    for name, record in records.items():
        problem = _file_problem(directory / name, record)
        if problem is not None:
            return f"{name} {problem}"
    return None


def _file_problem(path: Path, record: FileRecord) -> str | None:
    try:
        stat = path.stat()
    except FileNotFoundError:
        return "is missing"
    if stat.st_size != record.size:
        return f"has {stat.st_size} bytes, expected {record.size}"
    if stat.st_mtime_ns != record.mtime_ns and sha256_file(path) != record.sha256:
        return "does not match its recorded SHA-256"
    return None


def cached_build(target: Path, build: Callable[[Path], dict[str, str]], what: str) -> Path:
    """`target`, verified; built first (or rebuilt, if damaged) by `build(staging_dir)`.

    `build` writes the files into the empty directory it is given and returns a
    description of their source for the manifest. `what` names the copy in messages.
    """
    problem = cache_problem(target)
    if problem is None:
        return target
    if target.exists():
        logger.warning("the cached %s at %s is unusable (%s); rebuilding it", what, target, problem)
        _discard(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_staging(target)
    staging = _staging_path(target)
    try:
        staging.mkdir()
        write_manifest(staging, build(staging))
        try:
            staging.rename(target)
        except OSError:
            # Another process finished first; its copy is complete if it verifies.
            if cache_problem(target) is not None:
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _staging_path(target: Path) -> Path:
    return target.parent / f".{target.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp"


def _discard(target: Path) -> None:
    """Move a damaged copy out of the way first (atomic), then delete it."""
    doomed = _staging_path(target)
    try:
        target.rename(doomed)
    except FileNotFoundError:
        return  # another process already discarded it
    shutil.rmtree(doomed, ignore_errors=True)


def _remove_stale_staging(target: Path) -> None:
    """Delete staging copies left by killed conversions (older than any live one)."""
    cutoff = time.time() - STALE_STAGING_S
    for stale in target.parent.glob(f".{target.name}.*.tmp"):
        with contextlib.suppress(OSError):
            if stale.stat().st_mtime < cutoff:
                shutil.rmtree(stale, ignore_errors=True)
