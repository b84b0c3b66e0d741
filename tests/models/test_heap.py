"""Returning freed heap to the system: a large freed block leaves the resident set."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

from gapscope.models.heap import keep_heap_small, release_free_memory


def _resident_bytes() -> int:
    return int(Path("/proc/self/statm").read_text().split()[1]) * 4096


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc and /proc are Linux's")
def test_freed_tensors_leave_the_resident_set() -> None:
    assert keep_heap_small() and release_free_memory(collect=True)
    before = _resident_bytes()
    # 2 MB blocks (under the mmap threshold: from the arena), each followed by a small tensor
    # that stays alive, so the freed blocks are holes that the arena's top cannot trim
    blocks, keepers = [], []
    for _ in range(128):
        blocks.append(torch.ones(1 << 19))
        keepers.append(torch.ones(16))
    assert _resident_bytes() - before > 200 << 20
    del blocks
    release_free_memory()
    assert _resident_bytes() - before < 64 << 20
    assert len(keepers) == 128
