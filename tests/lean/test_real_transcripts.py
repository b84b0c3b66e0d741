"""Development check: our parser reads every real REPL response in the shared transcripts.

The transcripts (leanprover-community/repl test suite) live outside the project; this test is
skipped where they are absent.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gapscope.lean.protocol import decode_block, parse_response, split_blocks
from gapscope.lean.soundness import is_sorry_warning

TRANSCRIPTS = Path(__file__).resolve().parents[3] / "shared" / "data" / "lean-repl" / "test"


@pytest.mark.skipif(not TRANSCRIPTS.is_dir(), reason=f"REPL transcripts not found at {TRANSCRIPTS}")
def test_every_real_response_parses() -> None:
    files = sorted(TRANSCRIPTS.rglob("*.expected.out"))
    assert len(files) > 50
    responses = 0
    sorry_warnings = 0
    for path in files:
        for block in split_blocks(path.read_text(encoding="utf-8")):
            response = parse_response(decode_block(block))
            responses += 1
            sorry_warnings += sum(is_sorry_warning(m) for m in response.messages)
            if response.error is None and any("uses `sorry`" in m.data for m in response.messages):
                assert any(is_sorry_warning(m) for m in response.messages), path
    assert responses > 100
    assert sorry_warnings > 10
