"""The REPL JSON protocol: framing, decoding, shape checks."""

from __future__ import annotations

import json

import pytest

from gapscope.lean.protocol import (
    ProtocolError,
    ReplResponse,
    decode_block,
    encode_command,
    parse_response,
    split_blocks,
)
from gapscope.lean.verdict import LeanMessage


def test_encode_command_frames_with_a_blank_line() -> None:
    assert encode_command("def f := 1").decode() == '{"cmd": "def f := 1"}\n\n'
    assert json.loads(encode_command("x", env=3)) == {"cmd": "x", "env": 3}


def test_split_blocks_handles_pretty_printed_json() -> None:
    text = '{"env":\n 0}\n\n\n{"message": "Unknown environment."}\n'
    assert [decode_block(b) for b in split_blocks(text)] == [
        {"env": 0},
        {"message": "Unknown environment."},
    ]


def test_parse_command_response() -> None:
    raw = {
        "env": 2,
        "messages": [
            {
                "severity": "warning",
                "pos": {"line": 1, "column": 8},
                "endPos": {"line": 1, "column": 11},
                "data": "declaration uses `sorry`",
            },
        ],
        "sorries": [{"proofState": 0, "pos": {"line": 1, "column": 30}, "goal": "⊢ True"}],
    }
    response = parse_response(raw)
    assert response.env == 2
    assert response.messages == (LeanMessage("warning", "declaration uses `sorry`", 1, 8, 1, 11),)
    assert response.sorries[0].goal == "⊢ True"


def test_repl_level_error() -> None:
    assert parse_response({"message": "Unknown environment."}) == ReplResponse(
        error="Unknown environment."
    )


@pytest.mark.parametrize(
    "raw",
    [
        {"env": "zero"},
        {"messages": "oops"},
        {"messages": [{"severity": "error"}]},
        {"messages": [{"severity": "info", "data": "x", "pos": {"column": 1}}]},
        {"sorries": [3]},
    ],
)
def test_bad_shapes_are_protocol_errors(raw: dict[str, object]) -> None:
    with pytest.raises(ProtocolError):
        parse_response(raw)


@pytest.mark.parametrize("block", ['{"env": 0, "messages": [', "[1, 2]"])
def test_malformed_blocks(block: str) -> None:
    with pytest.raises(ProtocolError):
        decode_block(block)
