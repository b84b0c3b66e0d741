"""The shipped known-answer cases on a real Lean: every case gives its answer on every path.

Needs ``lake`` and a built workspace named by ``$GAPSCOPE_LEAN=local:DIR`` (``gapscope lean
setup DIR`` and the commands it prints); skipped with the reason otherwise.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from gapscope.lean.factory import open_backend
from gapscope.lean.local import LocalBackend
from gapscope.lean.selftest.runner import run_selftest

pytestmark = pytest.mark.lean
SPEC = os.environ.get("GAPSCOPE_LEAN", "")


def _skip_reason() -> str | None:
    if shutil.which("lake") is None:
        return "lake is not on PATH (Lean is not installed here)"
    if not SPEC.startswith("local:") or not Path(SPEC.removeprefix("local:")).is_dir():
        return "GAPSCOPE_LEAN does not name a local workspace (gapscope lean setup DIR)"
    return None


@pytest.mark.skipif(_skip_reason() is not None, reason=_skip_reason() or "")
def test_every_shipped_case_gives_its_known_answer() -> None:
    with open_backend(SPEC, allow_untested=True, cache=None, progress=False) as backend:
        assert isinstance(backend, LocalBackend)
        result = run_selftest(backend)
    assert result.passed, [(r.case, r.path, r.status, r.detail) for r in result.failures]
