"""Suite-wide: the Lean self-test gate is opened for tests that drive a fake REPL.

The fake REPL is not Lean, so it cannot pass the shipped known-answer cases; every test that
opens a local backend through ``open_backend`` runs "untested" (its verdicts say
``selftest=False``). The gate's own tests (tests/lean/test_selftest.py) remove this.
"""

from __future__ import annotations

import pytest

from gapscope.lean.selftest.record import ENV_ALLOW_UNTESTED


@pytest.fixture(autouse=True)
def _untested_lean_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_ALLOW_UNTESTED, "1")
