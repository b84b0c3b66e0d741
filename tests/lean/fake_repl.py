"""A stand-in for the Lean REPL: same stdin/stdout JSON framing, scripted answers.

Run as a subprocess by the tests and the benchmark. A ``-- fake:<behaviour>`` comment in a
command picks the answer: one of the entries in ``fixtures/repl_responses.json`` (their
``#print axioms`` replies are generated per declaration), or ``timeout`` (sleeps),
``crash`` (exits 3), ``malformed`` (prints broken JSON), ``big`` (holds 64 MiB, then answers
valid), ``unknown_constant`` (``#print axioms`` fails), ``twice`` (answers valid, then the same
answer again a moment later, as a desynchronised REPL would), ``late_twice`` (answers, and
sends that answer a second time only when the next command arrives, just before answering
it), ``flood`` (a reply of ``FAKE_REPL_FLOOD_MB`` MiB), ``kernel_reject`` (elaborates, but its
``unpickleEnvFrom`` fails on them). Without a marker the fake
reads the code as Lean would report it, roughly: a declaration right after ``:= by`` (an
empty tactic block: Lean's parser rejects it) -> ``parse_error``, ``sorryAx`` ->
``hidden_sorry``,
``sorry``/``admit`` -> ``sorry``, ``native_decide`` -> ``native_decide``, an ``axiom``
declaration -> ``user_axiom``, anything else ``valid`` (a credulous Lean: no errors ever,
which is what the hostile-output tests need). A command with an ``import`` line is a
header: it sleeps ``FAKE_REPL_IMPORT_DELAY`` seconds (import cost) and returns a new env.
Every command is appended to ``FAKE_REPL_LOG`` (JSON lines with the pid) when that is set.

Environments hold the constants their commands declared (``fake_elab``: signatures resolved as
Lean resolves names in namespaces, axioms from the fixture of the declaring command), so the
acceptance check of ``gapscope.lean.replay`` runs for real: ``pickleTo`` writes an env's
constants to a file, ``unpickleEnvFrom`` replays them into a new env (nothing else of the code
survives, as in the real REPL; it imports again, so it sleeps the import delay too),
``set_option pp.all true in #check @_root_.X`` prints X's signature and
``#print axioms _root_.X`` its axioms.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fake_elab import Constants, elaborate

FIXTURES = json.loads(
    (Path(__file__).parent / "fixtures" / "repl_responses.json").read_text(encoding="utf-8")
)
MARKER = re.compile(r"-- fake:(\w+)")
CONTENT = (
    (
        re.compile(
            r":=\s*by\s*(?:--[^\n]*\n\s*|/-.*?-/\s*)*(?:theorem|lemma|def|example|axiom)\b",
            re.DOTALL,
        ),
        "parse_error",
    ),
    (re.compile(r"\bsorryAx\b"), "hidden_sorry"),
    (re.compile(r"\b(?:sorry|admit)\b"), "sorry"),
    (re.compile(r"\bnative_decide\b"), "native_decide"),
    (re.compile(r"(?m)^\s*axiom\s"), "user_axiom"),
)
PRINT_AXIOMS = re.compile(r"^#print axioms (?!_root_\.)(\S+)\s*$")
ROOT_CHECK = re.compile(r"^set_option pp\.all true in #check @_root_\.(.+?)\s*$")
ROOT_AXIOMS = re.compile(r"^#print axioms _root_\.(.+?)\s*$")
ENVS: dict[int, Constants] = {}
HELD: list[bytearray] = []


def _log(command: dict[str, Any]) -> None:
    path = os.environ.get("FAKE_REPL_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"pid": os.getpid(), **command}) + "\n")


def _send(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj, indent=1, ensure_ascii=False) + "\n\n")
    sys.stdout.flush()


def _axiom_messages(code: str, axioms: list[str] | None, behaviour: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for number, line in enumerate(code.split("\n"), start=1):
        match = PRINT_AXIOMS.match(line)
        if not match:
            continue
        name = match[1]
        pos = {"line": number, "column": 0}
        end = {"line": number, "column": len("#print axioms")}
        if behaviour == "unknown_constant":
            out.append(
                {
                    "severity": "error",
                    "pos": pos,
                    "endPos": end,
                    "data": f"unknown constant '{name}'",
                }
            )
        elif axioms is not None:
            data = (
                f"'{name}' depends on axioms: [{', '.join(axioms)}]"
                if axioms
                else f"'{name}' does not depend on any axioms"
            )
            out.append({"severity": "info", "pos": pos, "endPos": end, "data": data})
    return out


def _queries(code: str, constants: Constants) -> list[dict[str, Any]]:
    """Answers to the harness's root-namespace queries, from the env's constants."""
    out: list[dict[str, Any]] = []
    for number, line in enumerate(code.split("\n"), start=1):
        pos = {"line": number, "column": 0}
        check, axioms = ROOT_CHECK.match(line), ROOT_AXIOMS.match(line)
        name = (check or axioms or [None, None])[1]
        if name is None:
            continue
        found = constants.get(name)
        if found is None:
            kind = "identifier" if check else "constant"
            data = f"unknown {kind} '_root_.{name}'"
            out.append({"severity": "error", "pos": pos, "endPos": pos, "data": data})
        elif check:
            out.append({"severity": "info", "pos": pos, "endPos": pos, "data": found["signature"]})
        else:
            used = found["axioms"]
            data = (
                f"'{name}' depends on axioms: [{', '.join(used)}]"
                if used
                else f"'{name}' does not depend on any axioms"
            )
            out.append({"severity": "info", "pos": pos, "endPos": pos, "data": data})
    return out


def _pickle(command: dict[str, Any]) -> dict[str, Any]:
    env = command.get("env")
    if env not in ENVS:
        return {"message": "Unknown environment."}
    Path(command["pickleTo"]).write_text(json.dumps(ENVS[env]), encoding="utf-8")
    return {"env": env}


def _unpickle(command: dict[str, Any], next_env: int) -> dict[str, Any]:
    # The real REPL imports the pickled env's header again before the replay.
    time.sleep(float(os.environ.get("FAKE_REPL_IMPORT_DELAY", "0")))
    constants: Constants = json.loads(Path(command["unpickleEnvFrom"]).read_text(encoding="utf-8"))
    rejected = [n for n, c in constants.items() if "kernel_reject" in c.get("flags", ())]
    if rejected:
        return {"message": f"(kernel) declaration type mismatch, '{rejected[0]}'"}
    ENVS[next_env] = constants
    return {"env": next_env}


def _answer(code: str, env: int | None, next_env: int) -> dict[str, Any] | None:
    if any(line.startswith("import ") for line in code.split("\n")):
        time.sleep(float(os.environ.get("FAKE_REPL_IMPORT_DELAY", "0")))
        ENVS[next_env] = {}
        return {"env": next_env}
    if env is not None and env >= next_env:
        return {"message": "Unknown environment."}
    marker = MARKER.search(code)
    implied = (b for pattern, b in CONTENT if pattern.search(code))
    behaviour = marker[1] if marker else next(implied, "valid")
    if behaviour == "timeout":
        time.sleep(3600)
    if behaviour == "crash":
        sys.stderr.write("fake REPL: INTERNAL PANIC\n")
        sys.exit(3)
    if behaviour == "malformed":
        sys.stdout.write('{"env": 0, "messages": [\n\n')
        sys.stdout.flush()
        return None
    if behaviour == "big":
        HELD.append(bytearray(64 * 2**20))
        behaviour = "valid"
    if behaviour == "flood":
        size = int(float(os.environ.get("FAKE_REPL_FLOOD_MB", "1")) * 2**20)
        flood = {"severity": "info", "pos": {"line": 1, "column": 0}, "data": "x" * size}
        return {"messages": [flood], "env": next_env}
    fixture = FIXTURES.get(behaviour, FIXTURES["valid"])
    body = dict(fixture["body"])
    if "message" in body:
        return body
    base = ENVS.get(env, {}) if env is not None else {}
    flags = ("kernel_reject",) if behaviour == "kernel_reject" else ()
    constants = {**base, **elaborate(code, base, list(fixture["axioms"] or []), flags)}
    ENVS[next_env] = constants
    messages = list(body.get("messages", [])) + _axiom_messages(code, fixture["axioms"], behaviour)
    messages += _queries(code, constants)
    return {**body, "messages": messages, "env": next_env}


def main() -> None:
    next_env = 0
    late: dict[str, Any] | None = None
    buffer: list[str] = []
    for line in sys.stdin:
        if line.strip():
            buffer.append(line)
            continue
        if not buffer:
            continue
        command = json.loads("".join(buffer))
        buffer = []
        _log(command)
        if late is not None:
            _send(late)
            late = None
        if "pickleTo" in command:
            _send(_pickle(command))
            continue
        if "unpickleEnvFrom" in command:
            answer = _unpickle(command, next_env)
        else:
            answer = _answer(command["cmd"], command.get("env"), next_env)
        if answer is not None:
            if "env" in answer:
                next_env += 1
            _send(answer)
            if "-- fake:twice" in command.get("cmd", ""):
                time.sleep(0.05)
                _send(answer)
            if "-- fake:late_twice" in command.get("cmd", ""):
                late = answer


if __name__ == "__main__":
    main()
