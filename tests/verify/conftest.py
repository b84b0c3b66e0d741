"""One warm verifier shared by the tests of this package (the pool takes seconds to spawn)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from gapscope.verify import Verifier


@pytest.fixture(scope="session")
def verifier() -> Iterator[Verifier]:
    with Verifier(timeout_s=5.0, workers=2) as v:
        yield v
