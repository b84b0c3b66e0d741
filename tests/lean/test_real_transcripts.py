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
from tests.environment import SharedData


@pytest.fixture(scope="module")
def transcripts(shared_data: SharedData) -> Path:
    """The real REPL's test transcripts (``lean-repl/test`` in the shared data)."""
    return shared_data("lean-repl/test")


def test_every_real_response_parses(transcripts: Path) -> None:
    files = sorted(transcripts.rglob("*.expected.out"))
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


def test_the_env_id_of_every_real_reply_is_the_one_expected(transcripts: Path) -> None:
    """The one-to-one rule of ``ReplProcess.request`` (a reply must carry the env id its
    request gets) holds for the real REPL: every transcript replayed request by request."""
    checked = 0
    for out in sorted(transcripts.rglob("*.expected.out")):
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


def _pairs(transcripts: Path) -> list[tuple[dict[str, object], dict[str, object]]]:
    pairs = []
    for out in sorted(transcripts.rglob("*.expected.out")):
        sent = out.with_name(out.name.removesuffix(".expected.out") + ".in")
        requests = [
            json.loads(b, strict=False) for b in split_blocks(sent.read_text(encoding="utf-8"))
        ]
        replies = [decode_block(b) for b in split_blocks(out.read_text(encoding="utf-8"))]
        pairs += list(zip(requests, replies, strict=True))
    return pairs


def test_the_elaboration_verdict_reads_real_replies_as_lean_meant_them(transcripts: Path) -> None:
    """On every real reply to a ``cmd``: an error message is ``lean_error``, a sorry (the
    v4.33 warning text has backticks) is ``sorry``, anything else goes on to the acceptance
    check - and a real ``unpickleEnvFrom`` reply is an env, never a failure."""
    from gapscope.lean.replay import elaboration_verdict
    from gapscope.lean.verdict import Status

    seen: dict[object, int] = {}
    for request, reply in _pairs(transcripts):
        response = parse_response(reply)
        if "unpickleEnvFrom" in request:
            assert response.error is None and response.env is not None, (request, reply)
            seen["unpickle"] = seen.get("unpickle", 0) + 1
        if "cmd" not in request or response.error is not None:
            continue
        verdict = elaboration_verdict(response, 0.0)
        errors = any(m.severity == "error" for m in response.messages)
        sorry = bool(response.sorries) or any("uses `sorry`" in m.data for m in response.messages)
        expected = Status.LEAN_ERROR if errors else Status.SORRY if sorry else None
        assert (verdict.status if verdict else None) is expected, (request, reply)
        seen[expected] = seen.get(expected, 0) + 1
    assert seen.get("unpickle", 0) >= 5 and seen.get(Status.SORRY, 0) >= 10
    assert seen.get(Status.LEAN_ERROR, 0) >= 10 and seen.get(None, 0) >= 50
