"""On-disk verdict cache keyed by (gold, answer, schema, tolerance, verifier version).

A comparison is deterministic for a fixed verifier version, so a rerun or a resumed evaluation
should not pay for it again. Verdicts are appended as JSON lines as they are decided (a crash
loses at most the line being written; a torn last line is skipped on load). Timeouts and
internal errors describe the machine, not the answer, and are never stored. The version is in
the key, so a new verifier release simply misses the old entries.
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import IO, cast

import platformdirs

from gapscope.verify.verdict import (
    INTERNAL_ERROR,
    TIMEOUT,
    VERIFIER_VERSION,
    Label,
    Verdict,
)

_UNCACHED = frozenset({TIMEOUT, INTERNAL_ERROR})


def default_cache_path() -> Path:
    """``<user cache dir>/gapscope/verify/verdicts.jsonl``."""
    return Path(platformdirs.user_cache_dir("gapscope")) / "verify" / "verdicts.jsonl"


def cache_key(answer: str, gold: str, schema: str, rel_tol: float) -> str:
    """A stable digest of everything that determines a comparison's verdict."""
    blob = json.dumps([VERIFIER_VERSION, gold, answer, schema, rel_tol], ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class DiskCache:
    """Persistent map from ``cache_key`` to verdict; thread-safe, append-only."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._entries: dict[str, Verdict] = {}
        self._file: IO[str] | None = None
        if path.is_file():
            self._load()

    def _load(self) -> None:
        with self.path.open(encoding="utf-8", errors="replace") as lines:
            for line in lines:
                try:
                    key, label, reason, stage = json.loads(line)
                except (ValueError, TypeError):
                    continue
                if label in ("ACCEPT", "NOT_ACCEPT"):
                    self._entries[str(key)] = Verdict(cast(Label, label), str(reason), str(stage))

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str) -> Verdict | None:
        """The stored verdict for ``key``, else None."""
        with self._lock:
            return self._entries.get(key)

    def put(self, key: str, verdict: Verdict) -> None:
        """Store a settled verdict (timeouts and internal errors are skipped)."""
        if verdict.reason in _UNCACHED:
            return
        with self._lock:
            if key in self._entries:
                return
            self._entries[key] = verdict
            if self._file is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._file = self.path.open("a", encoding="utf-8")
            self._file.write(json.dumps([key, verdict.label, verdict.reason, verdict.stage]) + "\n")
            self._file.flush()

    def close(self) -> None:
        """Close the file (reopened on the next ``put``)."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None
