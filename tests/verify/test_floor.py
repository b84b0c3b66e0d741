"""The verifier is a floor: it imports no diagnostic, and its CLI imports nothing heavy."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).parents[2] / "src"
DIAGNOSTICS = ("gapscope.ladder", "gapscope.s2b", "gapscope.onng", "gapscope.prove", "gapscope.t2")
HEAVY = ("sympy", "math_verify", "latex2sympy2_extended", "inspect_ai", "scipy", "torch")


def _modules_after(statement: str) -> set[str]:
    code = f"{statement}; import sys; print('\\n'.join(sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code],
        check=True,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(SRC)},
    ).stdout
    return set(out.split())


def test_verify_imports_no_diagnostic_and_nothing_heavy() -> None:
    loaded = _modules_after("import gapscope.app.verify, gapscope.verify.__main__")
    assert not [m for m in loaded if m.startswith(DIAGNOSTICS)]
    assert not [m for m in loaded if m.split(".")[0] in HEAVY]
