"""Development check: our parser reads every real REPL response in the shared transcripts.

The transcripts (leanprover-community/repl test suite) live outside the project; this test is
skipped where they are absent.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gapscope.lean.protocol import decode_block, expected_env, parse_response, split_blocks
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


@pytest.mark.skipif(not TRANSCRIPTS.is_dir(), reason=f"REPL transcripts not found at {TRANSCRIPTS}")
def test_the_env_id_of_every_real_reply_is_the_one_expected() -> None:
    """The one-to-one rule of ``ReplProcess.request`` (a reply must carry the env id its
    request gets) holds for the real REPL: every transcript replayed request by request."""
    checked = 0
    for out in sorted(TRANSCRIPTS.rglob("*.expected.out")):
        sent = out.with_name(out.name.removesuffix(".expected.out") + ".in")
        # Lean's JSON reader takes raw newlines inside strings; some test inputs have them.
        requests = [
            json.loads(b, strict=False) for b in split_blocks(sent.read_text(encoding="utf-8"))
        ]
        replies = [decode_block(b) for b in split_blocks(out.read_text(encoding="utf-8"))]
        assert len(requests) == len(replies), out
        next_env = 0
        for request, reply in zip(requests, replies, strict=True):
            expected, following = expected_env(request, next_env)
            if "message" in reply and "env" not in reply:
                continue  # a REPL-level error consumes no env id
            assert reply.get("env") == expected, (out.name, request, reply)
            next_env = following
            checked += expected is not None
    assert checked > 100
