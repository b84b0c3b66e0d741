"""Put the fake Lean tools where the production code looks for them.

``install_fake_tools`` writes ``lake``, ``landrun`` and ``lean`` (``--print-prefix`` only)
into a bin folder, and comparator and lean4export where ``lake build`` leaves them in a
workspace (``COMPARATOR_BINARY``, ``LEAN4EXPORT_BINARY``): each a shell script that runs the
fake with this Python, so ``find_kernel_checker`` finds and runs them as it would the real ones.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from gapscope.lean.kernel import COMPARATOR_BINARY, LEAN4EXPORT_BINARY

HERE = Path(__file__).parent
FAKE_BIN = HERE / "fakebin"
"""Tools comparator runs before building that the tests' machines may lack (``lean``)."""


def _script(path: Path, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    path.chmod(0o755)


def _runs(path: Path, fake: str) -> None:
    _script(path, f'exec "{sys.executable}" "{HERE / fake}" "$@"')


def install_fake_tools(bin_dir: Path, workspace: Path) -> None:
    """The fake toolchain in ``bin_dir`` and the fake checker binaries in ``workspace``."""
    _runs(bin_dir / "lake", "fake_lake.py")
    _runs(bin_dir / "landrun", "fake_landrun.py")
    shutil.copy(FAKE_BIN / "lean", bin_dir / "lean")
    _runs(workspace / COMPARATOR_BINARY, "fake_comparator.py")
    _runs(workspace / LEAN4EXPORT_BINARY, "fake_lean4export.py")
