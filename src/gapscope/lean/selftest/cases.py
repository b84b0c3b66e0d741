"""The known-answer cases (``cases.json``) and the hash of what they certify.

Each case is a tiny challenge/solution pair (``kind: theorem``: official names compared with a
challenge) or a piece of code checked for compilation alone (``kind: compile``, T2's check),
with the verdict a correct judge must reach: ``valid`` or ``rejected`` (any settled non-VALID
status; a ``server_error`` or ``timeout`` establishes nothing and fails the case). ``misses``
lists the paths documented not to catch it (docs/lean.md): ``repl-text`` cannot see a
constructor's type, a constant's kind or a constant the kernel never checked; such a case is
run and recorded there, but not asserted. ``header`` (per case, else the file's) is what the
challenge and solution are elaborated on; ``needs`` the packages (lower-case names in the
workspace's manifest) that header imports: a case whose packages the workspace has not built
is recorded as skipped, and runs wherever they are (the Mathlib-header cases). ``cites`` and
``reference`` (read by people, not by the loader) name, for each Lean API a case calls, the
file and line at the pinned commits where it is used, and the reference suite's test project
the case mirrors (docs/lean.md has the table).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

JUDGE_PACKAGES = ("gapscope.lean", "gapscope.lean.selftest")
"""The packages whose modules, every one, make the source hash with the cases: any module of
them (the screen, the head reader, the lexer, the verdict types, ...) can change a verdict,
and a hand-kept list of the ones that matter went stale as modules were added."""


@dataclass(frozen=True)
class Case:
    """One known-answer case; ``why`` says what it tests."""

    name: str
    kind: str
    solution: str
    expect: str
    challenge: str = ""
    required: tuple[str, ...] = ()
    misses: tuple[str, ...] = ()
    why: str = ""
    header: str = ""
    needs: tuple[str, ...] = ()


def cases_file() -> Path:
    return Path(str(resources.files("gapscope.lean.selftest") / "cases.json"))


def load_cases(path: Path | None = None) -> list[Case]:
    """The shipped cases (or those in ``path``); ValueError naming a malformed case."""
    data = json.loads((path or cases_file()).read_text(encoding="utf-8"))
    header = str(data.get("header", ""))
    out = []
    for raw in data["cases"]:
        name = raw.get("name", "?")
        if raw.get("kind") not in ("theorem", "compile") or raw.get("expect") not in (
            "valid",
            "rejected",
        ):
            raise ValueError(f"self-test case {name!r}: kind or expect is not one of the known")
        if raw["kind"] == "theorem" and not (raw.get("required") and raw.get("challenge")):
            raise ValueError(f"self-test case {name!r}: a theorem case needs required, challenge")
        out.append(
            Case(
                name=name,
                kind=raw["kind"],
                solution=raw["solution"],
                expect=raw["expect"],
                challenge=raw.get("challenge", ""),
                required=tuple(raw.get("required", ())),
                misses=tuple(raw.get("misses", ())),
                why=raw.get("why", ""),
                header=raw.get("header", header),
                needs=tuple(raw.get("needs", ())),
            )
        )
    return out


def source_hash(path: Path | None = None) -> str:
    """sha256 of the cases and the judge's sources: a change to either voids a pass."""
    digest = hashlib.sha256((path or cases_file()).read_bytes())
    for package in JUDGE_PACKAGES:
        modules = [f for f in resources.files(package).iterdir() if f.name.endswith(".py")]
        for module in sorted(modules, key=lambda f: f.name):
            digest.update(f"{package}/{module.name}".encode() + b"\0" + module.read_bytes())
    return digest.hexdigest()
