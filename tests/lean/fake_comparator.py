"""A stand-in for leanprover/comparator's command line, with its semantics on the toy Lean.

``fake_comparator.py CONFIG`` runs in the check's project folder, as ``lake env comparator
CONFIG`` does: it reads ``config.json`` and the two modules, prints comparator's progress lines
(``Building M``, ``Exporting ... from M``), and exits 0 after "Your solution is okay!" or 1
after an ``uncaught exception: ...`` line on stderr, as Lean's ``main`` does. Semantics
(``fake_elab``): every official name in the solution with the challenge's signature, every
constant that signature mentions the same on both sides, only permitted axioms (``sorry`` ->
``sorryAx``, ``native_decide`` -> ``Lean.ofReduceBool``, an ``axiom`` declaration).
``FAKE_COMPARATOR`` adversaries: ``okay_exit_1`` (prints the success line, exits 1),
``sigkill`` (killed by SIGKILL: out of memory), ``child_killed`` (a build killed: "Child
exited with 137"), ``forged_exception`` (the solution's build prints a forged "uncaught
exception: Child exited with 137" line; comparator's own last line then says what it found).
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fake_elab import IDENT, Constants, elaborate

STANDARD = ["propext", "Classical.choice", "Quot.sound"]


def _constants(source: str) -> Constants:
    axioms = list(STANDARD)
    if re.search(r"\bsorry\b", source):
        axioms.append("sorryAx")
    if "native_decide" in source:
        axioms.append("Lean.ofReduceBool")
    if re.search(r"(?m)^\s*axiom\s", source):
        axioms.append("cheat")
    return elaborate(source, {}, axioms, ())


def fail(message: str) -> int:
    print(f"uncaught exception: {message}", file=sys.stderr)
    return 1


def main(config_path: str) -> int:
    mode = os.environ.get("FAKE_COMPARATOR", "")
    config = json.loads(Path(config_path).read_text(encoding="utf-8"))
    modules = {}
    for key in ("challenge_module", "solution_module"):
        module = config[key]
        print(f"Building {module}", flush=True)
        if key == "solution_module":
            if mode == "sigkill":
                os.kill(os.getpid(), signal.SIGKILL)
            if mode == "child_killed":
                return fail("Child exited with 137")
            if mode == "forged_exception":
                print("uncaught exception: Child exited with 137", flush=True)
        source = Path(f"{module}.lean").read_text(encoding="utf-8")
        if "-- fake:error" in source:
            return fail("Child exited with 1")
        print(f"Exporting {config['theorem_names']} from {module}", flush=True)
        modules[key] = _constants(source)
    challenge, solution = modules["challenge_module"], modules["solution_module"]
    for name in config["theorem_names"]:
        c, s = challenge.get(name), solution.get(name)
        if c is None:
            return fail(f"Const not found in challenge '{name}'")
        if s is None:
            return fail(f"Const not found in solution '{name}'")
        mentioned = set(IDENT.findall(c["signature"])) - {name}
        for other in sorted(mentioned):
            if (other in challenge or other in solution) and challenge.get(other) != solution.get(
                other
            ):
                return fail(f"Const does not match between challenge and target '{other}'")
        if c["signature"] != s["signature"]:
            return fail(f"Challenge and solution theorem statement do not match: '{name}'")
        bad = set(s["axioms"]) - set(config["permitted_axioms"])
        if bad:
            return fail(f"Illegal axiom detected: '{sorted(bad)[0]}'")
    print("Lean default kernel accepts the solution")
    print("Your solution is okay!")
    return 1 if mode == "okay_exit_1" else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
