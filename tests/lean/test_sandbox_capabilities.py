"""Lean's bubblewrap sandbox as root: the user namespace must not hand the model's code the
capability to remount its read-only view writable (it did before every capability was
dropped: ``mount -o remount,rw,bind PROJECT`` then wrote into the project on the host)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from gapscope.lean.sandbox import sandbox_argv
from tests.environment import require_lean_sandbox


def test_sandboxed_code_cannot_remount_the_root_writable(tmp_path: Path) -> None:
    require_lean_sandbox()
    outside = tmp_path / "remounted"
    shell = (
        f"for m in / /usr {tmp_path}; do mount -o remount,rw,bind $m; done 2>/dev/null; "
        f"touch {outside} 2>/dev/null; grep CapEff /proc/self/status"
    )
    done = subprocess.run(
        sandbox_argv(["sh", "-c", shell], tmp_path), capture_output=True, text=True, timeout=60
    )
    assert "CapEff:\t0000000000000000" in done.stdout, done
    assert not outside.exists()
