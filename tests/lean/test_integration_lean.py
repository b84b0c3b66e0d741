"""Real Lean: runs only where a toolchain and a built REPL project are configured."""

from __future__ import annotations

import os
import shutil

import pytest

from gapscope.lean.factory import open_backend
from gapscope.lean.verdict import Status

pytestmark = pytest.mark.lean

SPEC = os.environ.get("GAPSCOPE_LEAN", "")


def _skip_reason() -> str | None:
    if shutil.which("lean") is None or shutil.which("lake") is None:
        return "lean/lake not on PATH (install elan; see docs/lean.md)"
    if not SPEC.startswith("local:"):
        return "set GAPSCOPE_LEAN=local:DIR to a workspace from `gapscope lean setup DIR`"
    return None


@pytest.mark.skipif(_skip_reason() is not None, reason=_skip_reason() or "")
def test_real_repl_verdicts() -> None:
    with open_backend(SPEC, max_workers=1) as backend:
        assert backend.check("theorem t (n : Nat) : n + 0 = n := rfl").status is Status.VALID
        assert backend.check("theorem t (n : Nat) : n + 0 = n := sorry").status is Status.SORRY
        assert (
            backend.check("theorem t (n : Nat) : n + 0 = n + 1 := rfl").status is Status.LEAN_ERROR
        )
        cheat = "axiom cheat : False\ntheorem t : 1 = 2 := cheat.elim"
        verdict = backend.check(cheat)
        assert verdict.status is Status.SORRY and "cheat" in verdict.detail
        assert backend.check("example : 2 + 2 = 4 := by decide").status is Status.VALID
