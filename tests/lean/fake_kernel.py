"""A stand-in for the kernel checker's two commands, with the semantics of GapscopeCheck.lean.

``fake_kernel.py lean --root=DIR -o OUT.olean IN.lean`` "compiles" a module: its constants
(``fake_elab``) are written to OUT as JSON; a ``-- fake:error`` line fails the compilation.
``fake_kernel.py check DIR CHALLENGE SOLUTION NAME...`` prints the checker's one JSON line: the
solution's constants replay unless one came from a ``-- fake:kernel_reject`` declaration, and
per name ``same_type`` (identical signatures), ``constants_agree`` (every constant of either
module that the challenge's signature mentions has the same signature on both sides) and the
solution's axioms (``sorryAx`` for ``sorry``, ``Lean.ofReduceBool`` for ``native_decide``).
``FAKE_KERNEL_REPORT`` = ``drop_same_type`` / ``same_type_false`` corrupts the report.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fake_elab import IDENT, Constants, elaborate

STANDARD = ["propext", "Classical.choice", "Quot.sound"]


def compile_module(args: list[str]) -> int:
    out = Path(args[args.index("-o") + 1])
    source = Path(args[-1]).read_text(encoding="utf-8")
    if "-- fake:error" in source:
        print(f"{args[-1]}:1:0: error: fake error")
        return 1
    axioms = list(STANDARD)
    if re.search(r"\bsorry\b", source):
        axioms.append("sorryAx")
    if "native_decide" in source:
        axioms.append("Lean.ofReduceBool")
    flags = ("kernel_reject",) if "-- fake:kernel_reject" in source else ()
    out.write_text(json.dumps(elaborate(source, {}, axioms, flags)), encoding="utf-8")
    return 0


def _load(folder: str, module: str) -> Constants:
    loaded: Constants = json.loads((Path(folder) / f"{module}.olean").read_text(encoding="utf-8"))
    return loaded


def check(args: list[str]) -> int:
    folder, challenge_module, solution_module, *names = args
    challenge, solution = _load(folder, challenge_module), _load(folder, solution_module)
    rejected = [n for n, c in solution.items() if "kernel_reject" in c["flags"]]
    if rejected:
        replay = {"ok": False, "error": f"(kernel) declaration type mismatch, '{rejected[0]}'"}
        print(json.dumps({"checker": "gapscope", "replay": replay, "theorems": []}))
        return 0
    theorems = []
    for name in names:
        c, s = challenge.get(name), solution.get(name)
        if c is None or s is None:
            theorems.append(
                {"name": name, "in_challenge": c is not None, "in_solution": s is not None}
            )
            continue
        mentioned = set(IDENT.findall(c["signature"])) - {name}
        bad = sorted(
            n
            for n in mentioned
            if (n in challenge or n in solution) and challenge.get(n) != solution.get(n)
        )
        entry = {
            "name": name,
            "in_challenge": True,
            "in_solution": True,
            "same_type": c["signature"] == s["signature"],
            "constants_agree": not bad,
            "disagreeing": bad,
            "axioms": s["axioms"],
        }
        mode = os.environ.get("FAKE_KERNEL_REPORT", "")
        if mode == "drop_same_type":
            del entry["same_type"]
        elif mode == "same_type_false":
            entry["same_type"] = False
        theorems.append(entry)
    print(json.dumps({"checker": "gapscope", "replay": {"ok": True}, "theorems": theorems}))
    return 0


if __name__ == "__main__":
    command, *rest = sys.argv[1:]
    sys.exit(compile_module(rest) if command == "lean" else check(rest))
