"""A small Lean project to mine, and what Lean would say of it (the fake tracer's input).

Dependency graph (an arrow: "is used by"), by hand:

    double -> double_eq, double_add, double_twice, quad_eq, quad
    double_eq -> double_add, double_twice
    double_twice -> quad_eq
    quad_eq -> quad_spec
    quad -> quad_spec

successors (transitive dependents): double 6, double_eq 4, double_twice 2, quad_eq 1, quad 1,
the rest 0. Depth: double 4, double_eq 3, double_twice 2, quad_eq 1, quad 1, the rest 0.
``Pair`` is a structure (not a target kind); ``lonely`` is isolated.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

FAKE_LAKE = Path(__file__).parent / "fake_lake_mine.py"

BASIC = """\
import Mathlib.Tactic

/-- Doubling. -/
def double (n : Nat) : Nat := n + n

theorem double_eq (n : Nat) : double n = 2 * n := by
  unfold double; omega

theorem double_add (a b : Nat) : double (a + b) = double a + double b := by
  rw [double_eq, double_eq, double_eq]; ring

theorem double_twice (n : Nat) : double (double n) = 4 * n := by
  rw [double_eq, double_eq]; ring

structure Pair where
  a : Nat
  b : Nat

theorem lonely : 1 + 1 = 2 := rfl
"""

MORE = """\
import Proj.Basic

theorem quad_eq (n : Nat) : double (double n) = 4 * n := double_twice n

def quad (n : Nat) : Nat := double (double n)

theorem quad_spec (n : Nat) : quad n = 4 * n := quad_eq n
"""

DECLARATIONS: dict[str, tuple[str, str, bool, str, list[str]]] = {
    # name: (module, kind, is_prop, exact source text, uses)
    "double": (
        "Proj.Basic",
        "def",
        False,
        "/-- Doubling. -/\ndef double (n : Nat) : Nat := n + n",
        [],
    ),
    "double_eq": (
        "Proj.Basic",
        "theorem",
        True,
        "theorem double_eq (n : Nat) : double n = 2 * n := by\n  unfold double; omega",
        ["double"],
    ),
    "double_add": (
        "Proj.Basic",
        "theorem",
        True,
        "theorem double_add (a b : Nat) : double (a + b) = double a + double b := by\n"
        "  rw [double_eq, double_eq, double_eq]; ring",
        ["double", "double_eq"],
    ),
    "double_twice": (
        "Proj.Basic",
        "theorem",
        True,
        "theorem double_twice (n : Nat) : double (double n) = 4 * n := by\n"
        "  rw [double_eq, double_eq]; ring",
        ["double", "double_eq"],
    ),
    "Pair": ("Proj.Basic", "structure", False, "structure Pair where\n  a : Nat\n  b : Nat", []),
    "lonely": ("Proj.Basic", "theorem", True, "theorem lonely : 1 + 1 = 2 := rfl", []),
    "quad_eq": (
        "Proj.More",
        "theorem",
        True,
        "theorem quad_eq (n : Nat) : double (double n) = 4 * n := double_twice n",
        ["double", "double_twice"],
    ),
    "quad": (
        "Proj.More",
        "def",
        False,
        "def quad (n : Nat) : Nat := double (double n)",
        ["double"],
    ),
    "quad_spec": (
        "Proj.More",
        "theorem",
        True,
        "theorem quad_spec (n : Nat) : quad n = 4 * n := quad_eq n",
        ["quad", "quad_eq"],
    ),
}
FILES = {"Proj.Basic": ("Proj/Basic.lean", BASIC), "Proj.More": ("Proj/More.lean", MORE)}


def position(text: str, index: int) -> dict[str, int]:
    """Lean's position of ``text[index]``: 1-based line, 0-based codepoint column."""
    line = text.count("\n", 0, index) + 1
    return {"line": line, "column": index - (text.rfind("\n", 0, index) + 1)}


def trace_entries() -> list[dict[str, Any]]:
    """What GapscopeMine.lean would print for the project."""
    out = []
    for name, (module, kind, is_prop, source, uses) in DECLARATIONS.items():
        text = FILES[module][1]
        start = text.index(source)
        span = {"start": position(text, start), "end": position(text, start + len(source))}
        out.append(
            {"name": name, "module": module, "kind": kind, "is_prop": is_prop, "range": span}
            | {"uses": uses}
        )
    return out


def make_project(root: Path) -> Path:
    """The project at ``root/Proj``, and its trace for the fake at ``root/trace.json``."""
    project = root / "Proj"
    for path, text in FILES.values():
        (project / path).parent.mkdir(parents=True, exist_ok=True)
        (project / path).write_text(text, encoding="utf-8")
    (project / "lakefile.lean").write_text("import Lake\nopen Lake DSL\n", encoding="utf-8")
    (project / "lean-toolchain").write_text("leanprover/lean4:v4.33.0\n", encoding="utf-8")
    (project / "lake-manifest.json").write_text('{"packages": []}\n', encoding="utf-8")
    (root / "trace.json").write_text(json.dumps(trace_entries()), encoding="utf-8")
    return project


def fake_lake_bin(root: Path) -> Path:
    """A folder holding an executable ``lake`` that runs the fake (put it first on PATH).

    The fake (stdlib only) is copied next to it and run by the real interpreter behind the
    virtualenv's: a sandboxed call sees only the ``/tmp`` folder its program lives in, and the
    checkout (with its virtualenv) may itself be under ``/tmp``.
    """
    folder = root / "bin"
    folder.mkdir(exist_ok=True)
    fake = shutil.copy(FAKE_LAKE, folder / FAKE_LAKE.name)
    python = os.path.realpath(sys.executable)
    lake = folder / "lake"
    lake.write_text(f'#!/bin/sh\nexec "{python}" "{fake}" "$@"\n', encoding="utf-8")
    lake.chmod(0o755)
    return folder
