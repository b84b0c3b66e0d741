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

With ``$COMPARATOR_LANDRUN`` set, the modules are reached as comparator reaches them
(``Main.lean`` at 5d21b89): first ``lean --print-prefix`` and ``which git`` (``M.run``; a
failure there is Lean's ``IO.Process.run`` error, "process 'lean' exited with code N"), then
per module ``landrun ... --env PATH --env HOME --env LEAN_ABORT_ON_PANIC -- lake build M``
(``safeLakeBuild``) and ``landrun ... --env LEAN_PATH ... -- $COMPARATOR_LEAN4EXPORT M -- names``
(``safeExport``), a non-zero exit of either being "Child exited with N"; the export's output
is what is compared. Without it the fake reads the modules itself (verdict semantics only).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
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


def _sandboxed(
    landrun: str, passed: list[str], command: list[str]
) -> subprocess.CompletedProcess[str]:
    args = ["--best-effort", "--ro", "/", "--rw", "/dev", "-ldd", "-add-exec"]
    args += [a for name in passed for a in ("--env", name)]
    env = {**os.environ, "LEAN_ABORT_ON_PANIC": "1"}
    return subprocess.run([landrun, *args, "--", *command], env=env, capture_output=True,
                          text=True, check=False)  # fmt: skip


def _prelude() -> str | None:
    """comparator's ``M.run``: the Lean prefix and git's location, before anything is built."""
    for tool, args in (("lean", ["--print-prefix"]), ("which", ["git"])):
        if shutil.which(tool) is None:
            return f"could not execute external process '{tool}'"
        done = subprocess.run([tool, *args], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            return f"process '{tool}' exited with code {done.returncode}"
    return None


def _through_landrun(landrun: str, module: str, names: list[str]) -> tuple[str | None, str]:
    """Build then export ``module`` as comparator does: (error, exported text)."""
    built = _sandboxed(landrun, ["PATH", "HOME", "LEAN_ABORT_ON_PANIC"], ["lake", "build", module])
    sys.stderr.write(built.stderr)
    if built.returncode != 0:
        return f"Child exited with {built.returncode}", ""
    export = os.environ.get("COMPARATOR_LEAN4EXPORT", "lean4export")
    passed = ["PATH", "HOME", "LEAN_PATH", "LEAN_ABORT_ON_PANIC"]
    exported = _sandboxed(landrun, passed, [export, module, "--", *names])
    sys.stderr.write(exported.stderr)
    if exported.returncode != 0:
        return f"Child exited with {exported.returncode}", ""
    return None, exported.stdout


def main(config_path: str) -> int:
    mode = os.environ.get("FAKE_COMPARATOR", "")
    landrun = os.environ.get("COMPARATOR_LANDRUN")
    if landrun and (problem := _prelude()):
        return fail(problem)
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
        if landrun:
            error, source = _through_landrun(landrun, module, config["theorem_names"])
            if error:
                return fail(error)
        else:
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
