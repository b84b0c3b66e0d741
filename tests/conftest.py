"""What every test shares.

- The Lean self-test gate is opened for tests that drive a fake REPL: the fake REPL is not
  Lean, so it cannot pass the shipped known-answer cases; every test that opens a local backend
  through ``open_backend`` runs "untested" (its verdicts say ``selftest=False``). The gate's
  own tests (tests/lean/test_selftest.py) remove this.
- Inspect's generate cache lives in the test's own directory: S2B-LM episodes against a served
  model use Inspect's cache (``s2b.task.episode_cache``); a cache in the user's home would let
  one test (or an earlier session) answer another's requests.
- ``shared_data`` finds the shared reference data wherever the checkout is
  (``tests/environment.py``): a test asks it for a file and skips, saying how to get it, where
  the file is not there.
"""

from __future__ import annotations

import pytest

from gapscope.lean.selftest.record import ENV_ALLOW_UNTESTED
from tests.environment import SharedData, find_shared_data


@pytest.fixture(autouse=True)
def _untested_lean_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_ALLOW_UNTESTED, "1")


@pytest.fixture(autouse=True)
def _own_generate_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path_factory.mktemp("inspect-cache")))


@pytest.fixture(scope="session")
def shared_data() -> SharedData:
    """The shared reference data (``shared_data("nng/levels.md")``), located once per run."""
    return SharedData(*find_shared_data())
