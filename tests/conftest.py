"""What every test shares: Inspect's generate cache lives in the test's own directory.

S2B-LM episodes against a served model use Inspect's cache (``s2b.task.episode_cache``); a
cache in the user's home would let one test (or an earlier session) answer another's requests.
"""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _own_generate_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path_factory.mktemp("inspect-cache")))
