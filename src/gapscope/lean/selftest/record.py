"""Where a self-test's result is kept, what it is keyed by, and the gate that reads it.

A pass certifies one installation: the toolchain, the REPL's revision (or the command that
stands in for it), each checker's identity and revision, the sha256 of every program the judge
runs, whether it runs sandboxed, and the source hash of the cases and the judge's code.
The record lives in the workspace (``.gapscope/selftest.json``); a backend
whose key has no passing record there decides no verdict (``open_backend`` refuses it, like a
missing sandbox) unless the user allowed an untested path.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from gapscope.lean.backend import LeanUnavailable
from gapscope.lean.flags import env_flag

RECORD = Path(".gapscope") / "selftest.json"
ENV_ALLOW_UNTESTED = "GAPSCOPE_LEAN_ALLOW_UNTESTED"


class SelfTestRequired(LeanUnavailable):
    """The backend's checker/REPL path has not passed the known-answer self-test here."""


@dataclass(frozen=True)
class InstallationKey:
    """What a self-test pass certifies: ``binaries`` holds ``(program, <path>#<sha256>)`` for
    the REPL, ``lean`` (and ``lean --version``), ``lake``, comparator, lean4export and
    landrun as resolved when the backend opened (``gapscope.lean.binaries``); ``sandboxed``
    whether its checks run sandboxed - a pass obtained unsandboxed does not certify sandboxed
    runs, nor the reverse."""

    toolchain: str
    repl: str
    judges: tuple[str, ...]
    source: str
    binaries: tuple[tuple[str, str], ...] = ()
    sandboxed: bool | None = None

    @property
    def digest(self) -> str:
        blob = json.dumps(asdict(self), sort_keys=True).encode("utf-8")
        return hashlib.sha256(blob).hexdigest()[:32]


def record_path(project: Path) -> Path:
    return project / RECORD


def load_records(project: Path) -> dict[str, Any]:
    """digest -> record; an unreadable file counts as no record."""
    try:
        data = json.loads(record_path(project).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save_record(project: Path, key: InstallationKey, record: dict[str, Any]) -> Path:
    """Store ``record`` under ``key`` (other keys' records are kept)."""
    records = load_records(project)
    records[key.digest] = {"key": asdict(key), **record}
    path = record_path(project)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(records, indent=1, ensure_ascii=False), encoding="utf-8")
    tmp.replace(path)
    return path


def passed(project: Path, key: InstallationKey) -> bool:
    """Whether a self-test passed for exactly this installation."""
    record = load_records(project).get(key.digest)
    return isinstance(record, dict) and record.get("passed") is True


def untested_allowed(allow: bool = False) -> bool:
    """Whether the user allowed an untested judge: the option or the environment variable."""
    return allow or env_flag(ENV_ALLOW_UNTESTED)


def refusal(project: Path, key: InstallationKey) -> str:
    """The one message a refused run prints."""
    seen = "failed" if key.digest in load_records(project) else "has not been run"
    return (
        f"the Lean self-test {seen} for this installation ({', '.join(key.judges)} at "
        f"{key.toolchain}): no verdict can be trusted. Run `gapscope lean selftest {project}` "
        f"(or, to run untested anyway, set {ENV_ALLOW_UNTESTED}=1; verdicts are then marked "
        "selftest=false)"
    )
