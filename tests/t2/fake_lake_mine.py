"""A stand-in for ``lake`` when mining: ``build`` and ``env lean --run GapscopeMine.lean``
(and ``env lean FILE``, the self-test's compile of a shipped program: it compiles).

``env lean --run TRACER OUT MODULES_FILE MODULE...`` writes what the real metaprogram writes
(its header comment): the declarations of ``$FAKE_MINE_TRACE`` (default: ``trace.json`` in
the folder above the project; a JSON list in the tracer's entry format) whose module is one
of the MODULEs. A module named in ``$FAKE_MINE_FAIL``
(comma separated) makes the whole call fail as an import of it would. ``$FAKE_MINE_BUILD_FAIL``
makes ``build`` fail; ``$FAKE_MINE_TRACER_BROKEN`` makes the tracer fail to compile, as on an
older Lean; a module in ``$FAKE_MINE_CRASH`` kills the call before it writes anything (as
Lean running out of memory does). ``$FAKE_MINE_WARN`` first prints a warning located in the
tracer's source (a deprecation, as a newer Lean prints). ``$FAKE_MINE_ESCAPE`` writes each
``module`` as Lean's ``Name.toString`` would (``Proj.«More Things»``) instead of echoing it.
Every call is appended to ``$FAKE_LAKE_LOG`` when it is set.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path


def main(args: list[str]) -> int:
    log = os.environ.get("FAKE_LAKE_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"args": args}) + "\n")
    if args == ["build"]:
        if os.environ.get("FAKE_MINE_BUILD_FAIL"):
            print("error: Proj/Basic.lean:3:0: unknown identifier 'oops'")
            return 1
        return 0
    if args[:2] == ["env", "lean"] and len(args) == 3 and Path(args[2]).is_file():
        return 0  # a program compiled without a message
    if args[:3] != ["env", "lean", "--run"] or len(args) < 7:
        print(f"fake lake: unsupported {args}", file=sys.stderr)
        return 2
    tracer, out, listing, modules = Path(args[3]), Path(args[4]), Path(args[5]), args[6:]
    if tracer.name != "GapscopeMine.lean" or not tracer.is_file():
        print(f"fake lake: not the tracer: {tracer}", file=sys.stderr)
        return 2
    if os.environ.get("FAKE_MINE_TRACER_BROKEN"):  # an older Lean: the tracer does not compile
        print(f"{tracer}:93:37: error: invalid argument name 'loadExts' for function")
        return 1
    if os.environ.get("FAKE_MINE_WARN"):
        print(f"{tracer}:150:24: warning: `String.trim` has been deprecated")
    project = set(filter(None, listing.read_text(encoding="utf-8").split("\n")))
    crashing = set(filter(None, os.environ.get("FAKE_MINE_CRASH", "").split(",")))
    if crashing & set(modules):  # Lean dies before it writes anything (out of memory)
        print("INTERNAL PANIC: out of memory")
        return 134
    failing = set(filter(None, os.environ.get("FAKE_MINE_FAIL", "").split(",")))
    if failing & set(modules):
        out.write_text(json.dumps({"error": f"unknown module {sorted(failing)[0]}"}))
        return 1
    fixture = os.environ.get("FAKE_MINE_TRACE") or Path.cwd().parent / "trace.json"
    entries = json.loads(Path(fixture).read_text(encoding="utf-8"))
    chosen = [e for e in entries if e["module"] in modules and e["module"] in project]
    if os.environ.get("FAKE_MINE_ESCAPE"):
        chosen = [e | {"module": _escaped(e["module"])} for e in chosen]
    out.write_text(json.dumps({"tracer": "gapscope", "modules": modules, "declarations": chosen}))
    return 0


def _escaped(module: str) -> str:
    """``Name.toString``: a component that is no plain identifier is written ``«…»``."""
    plain = re.compile(r"[A-Za-z_][A-Za-z0-9_']*")
    return ".".join(p if plain.fullmatch(p) else f"«{p}»" for p in module.split("."))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
