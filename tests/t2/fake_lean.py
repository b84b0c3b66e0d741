"""The fake REPL of tests/lean with two additions for T2 and the executors.

``FAKE_LEAN_CHECK_DELAY`` (seconds) makes every non-header command take that long, as a Lean
check would. ``FAKE_LEAN_T2=1`` switches from scripted fixture answers to a small model of
Lean that T2's attribution can be tested against:

- a line containing ``-- fake-error`` gets an error at that line;
- ``-- fake-breaks: a, b`` anywhere makes the declarations named ``a`` and ``b`` fail with an
  error at their head line (a wrong generated statement breaking those successors);
- every declaration whose text contains ``sorry`` gets Lean's sorry warning at its head;
- ``#print axioms X`` reports the standard axioms, plus ``sorryAx`` when X uses ``sorry``,
  plus every user ``axiom A`` (declared anywhere in the code) that is X itself or that X's
  text names, as Lean reports an axiom among its own and its users' axioms;
- ``#print axioms X.`` (a name ending in a dot) is a parse error on its line;
- what Lean's parser rejects in a command: an ``import`` line after the header, a Markdown
  fence line and a reply's ``THOUGHT`` line get an error there (a reply checked whole);
- ``-- fake:crash`` crashes the REPL (a backend failure), as in the plain fake;
- a BEq program (``beq_base_theorem`` admitted, ``beq_target_theorem`` proved from it): with
  ``exact?`` the target is proved (a "Try this" naming the base) when the two statements are
  equal up to whitespace; with ``apply``/``convert`` when they are equal up to whitespace and
  parentheses (the stand-in for a difference those tactics bridge); else an error on the
  target's head line.
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lean"))
import fake_repl

STANDARD = ["propext", "Classical.choice", "Quot.sound"]
HEAD = re.compile(r"^(?:@\[[^\]]*\]\s*)*(?:theorem|lemma|def|abbrev|instance|example)\s+(\S+)")
USER_AXIOM = re.compile(r"\baxiom\s+(\w+)")
BREAKS = re.compile(r"-- fake-breaks:([^\n]*)")
ORIGINAL = fake_repl._answer
BEQ = re.compile(
    r"theorem beq_base_theorem(?P<base>.*?):= sorry\s*"
    r"theorem beq_target_theorem(?P<target>.*?):= by(?P<proof>.*)",
    re.DOTALL,
)


def _declarations(lines: list[str]) -> dict[str, tuple[int, str]]:
    """name -> (1-based head line, text up to the next column-0 line)."""
    heads = [(i, m[1]) for i, line in enumerate(lines) if (m := HEAD.match(line))]
    out: dict[str, tuple[int, str]] = {}
    for n, (i, name) in enumerate(heads):
        end = next((j for j in range(i + 1, len(lines)) if lines[j][:1].strip()), len(lines))
        if n + 1 < len(heads):
            end = min(end, heads[n + 1][0])
        out[name] = (i + 1, "\n".join(lines[i:end]))
    return out


def _message(severity: str, line: int, data: str) -> dict[str, Any]:
    return {
        "severity": severity,
        "pos": {"line": line, "column": 0},
        "endPos": {"line": line, "column": 1},
        "data": data,
    }


NOT_LEAN = re.compile(r"^(?:import\s|```|THOUGHT)")


def _beq_messages(code: str, decls: dict[str, tuple[int, str]]) -> list[dict[str, Any]]:
    """The messages of a BEq program (module docstring), none for any other code."""
    found = BEQ.search(code)
    if found is None:
        return []
    line = decls["beq_target_theorem"][0]
    plus = re.search(r"apply beq_base_theorem|convert ", found["proof"]) is not None
    squash = re.compile(r"[\s()]+") if plus else re.compile(r"\s+")
    if squash.sub("", found["base"]) != squash.sub("", found["target"]):
        return [_message("error", line, "could not close the goal with beq_base_theorem")]
    return [] if plus else [_message("info", line, "Try this: exact beq_base_theorem")]


def _t2_answer(code: str, next_env: int) -> dict[str, Any]:
    lines = code.split("\n")
    decls = _declarations(lines)
    messages = _beq_messages(code, decls) + [
        _message("error", n, "fake error")
        for n, line in enumerate(lines, 1)
        if "-- fake-error" in line
    ]
    messages += [
        _message("error", n, "unexpected token; expected command")
        for n, line in enumerate(lines, 1)
        if NOT_LEAN.match(line)
    ]
    for match in BREAKS.finditer(code):
        for name in (x.strip() for x in match[1].split(",")):
            if name in decls:
                messages.append(_message("error", decls[name][0], f"type mismatch in {name}"))
    sorries = []
    for line, text in decls.values():
        if re.search(r"\bsorry\b", text):
            messages.append(_message("warning", line, "declaration uses `sorry`"))
            sorries.append({"pos": {"line": line, "column": 0}, "goal": "⊢ False"})
    for n, line in enumerate(lines, 1):
        match = fake_repl.PRINT_AXIOMS.match(line)
        if match:
            name = match[1]
            if name.endswith("."):  # no identifier ends with a dot: Lean's parser stops there
                messages.append(_message("error", n, "unexpected token; expected identifier"))
                continue
            text = decls.get(name, (0, ""))[1]
            uses = re.search(r"\bsorry\b", text)
            axioms = STANDARD + (["sorryAx"] if uses else [])
            axioms += [a for a in USER_AXIOM.findall(code) if a == name or a in text.split()]
            data = f"'{name}' depends on axioms: [{', '.join(axioms)}]"
            messages.append(_message("info", n, data))
    return {"env": next_env, "messages": messages, "sorries": sorries}


def _answer(code: str, env: int | None, next_env: int) -> dict[str, Any] | None:
    header = env is None and any(line.startswith("import ") for line in code.split("\n"))
    if not header:
        time.sleep(float(os.environ.get("FAKE_LEAN_CHECK_DELAY", "0")))
        if os.environ.get("FAKE_LEAN_T2") and "-- fake:crash" not in code:
            return _t2_answer(code, next_env)
    return ORIGINAL(code, env, next_env)


if __name__ == "__main__":
    fake_repl._answer = _answer
    fake_repl.main()
