"""Verdict cache keyed by (toolchain, judge, header, code), in memory and optionally on disk.

The judge is the identity of what decides (``repl-text`` at the REPL's revision, comparator at
its commit, the self-test's source hash): a verdict settled by one judge is never served for
another, so a repl-text VALID cached before a kernel checker was configured is checked again.

Lean is deterministic for a fixed toolchain and environment, so a settled verdict (valid,
sorry, lean_error) can be reused; TIMEOUT and SERVER_ERROR describe the machine, not the
proof, and are never cached. The disk form is JSON lines, appended as verdicts arrive (a crash
loses at most the line being written; a torn last line is skipped on load).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
from pathlib import Path
from typing import Any

import platformdirs

from gapscope.lean.verdict import Checker, LeanMessage, LeanVerdict, Status

UNCACHED: frozenset[Status] = frozenset({Status.TIMEOUT, Status.SERVER_ERROR})
RULES_VERSION = 3
"""Part of every key: verdicts settled under older soundness rules (VALID from text alone,
before the type comparison; before the judge was part of the key) must never be served
again."""


def default_cache_path() -> Path:
    """``<user cache dir>/gapscope/lean/verdicts.jsonl``."""
    return Path(platformdirs.user_cache_dir("gapscope")) / "lean" / "verdicts.jsonl"


def cache_key(
    toolchain: str,
    header: str,
    code: str,
    required: tuple[str, ...] = (),
    challenge: str = "",
    judge: str = "",
) -> str:
    """A stable digest of what determines the verdict, under :data:`RULES_VERSION`."""
    parts: list[object] = [
        RULES_VERSION, toolchain, judge, header, code, list(required), challenge,
    ]  # fmt: skip
    blob = json.dumps(parts, ensure_ascii=False).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()


def verdict_to_json(verdict: LeanVerdict) -> dict[str, Any]:
    data = dataclasses.asdict(verdict)
    data["status"] = verdict.status.value
    return data


def verdict_from_json(data: dict[str, Any]) -> LeanVerdict:
    axioms = data.get("axioms")
    return LeanVerdict(
        status=Status(data["status"]),
        messages=tuple(LeanMessage(**m) for m in data.get("messages", ())),
        elapsed_s=float(data.get("elapsed_s", 0.0)),
        axioms=None if axioms is None else tuple(axioms),
        detail=str(data.get("detail", "")),
        checker=Checker(data.get("checker", "")),
        sandboxed=data.get("sandboxed"),
        checks=tuple(data.get("checks", ())),
        selftest=data.get("selftest"),
        bounds=data.get("bounds"),
    )


class VerdictCache:
    """Thread-safe map from cache key to verdict; ``path`` makes it persistent."""

    def __init__(self, path: Path | None = None) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._entries: dict[str, LeanVerdict] = {}
        if path is not None and path.exists():
            self._load(path)

    def _load(self, path: Path) -> None:
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
                self._entries[record["key"]] = verdict_from_json(record["verdict"])
            except (ValueError, KeyError, TypeError):
                continue

    def __len__(self) -> int:
        return len(self._entries)

    def get(
        self,
        toolchain: str,
        header: str,
        code: str,
        required: tuple[str, ...] = (),
        challenge: str = "",
        judge: str = "",
    ) -> LeanVerdict | None:
        key = cache_key(toolchain, header, code, required, challenge, judge)
        with self._lock:
            return self._entries.get(key)

    def put(
        self,
        toolchain: str,
        header: str,
        code: str,
        verdict: LeanVerdict,
        required: tuple[str, ...] = (),
        challenge: str = "",
        judge: str = "",
    ) -> None:
        """Remember a settled verdict; TIMEOUT and SERVER_ERROR are ignored."""
        if verdict.status in UNCACHED:
            return
        key = cache_key(toolchain, header, code, required, challenge, judge)
        with self._lock:
            self._entries[key] = verdict
            if self._path is not None:
                self._path.parent.mkdir(parents=True, exist_ok=True)
                record = {"key": key, "verdict": verdict_to_json(verdict)}
                with self._path.open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(record, ensure_ascii=False) + "\n")
