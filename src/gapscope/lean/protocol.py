"""The Lean REPL's JSON protocol: commands out, responses in, as plain data.

The REPL (leanprover-community/repl) reads one JSON object per blank-line-terminated block on
stdin and answers each with one JSON object (often pretty-printed over several lines) followed
by a blank line. A blank line never occurs inside a JSON value (strings escape newlines), so
the blank line is an unambiguous frame delimiter. Keeping the parser pure lets it be checked
against real transcripts without a Lean installation.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from gapscope.lean.verdict import LeanMessage


class ProtocolError(ValueError):
    """The REPL sent something that is not a well-formed response."""


@dataclass(frozen=True)
class Sorry:
    """A ``sorry`` the REPL found: where it is and the goal it stands for."""

    goal: str
    line: int | None = None
    column: int | None = None


@dataclass(frozen=True)
class ReplResponse:
    """One parsed REPL answer.

    ``error`` is set for REPL-level failures (``{"message": "Unknown environment."}``), which
    say nothing about the Lean code itself.
    """

    env: int | None = None
    messages: tuple[LeanMessage, ...] = ()
    sorries: tuple[Sorry, ...] = ()
    error: str | None = None


def encode_request(payload: dict[str, Any]) -> bytes:
    """Any REPL request (``cmd``, ``pickleTo``, ``unpickleEnvFrom``) framed for its stdin."""
    return (json.dumps(payload, ensure_ascii=False) + "\n\n").encode("utf-8")


def encode_command(code: str, env: int | None = None) -> bytes:
    """A ``{"cmd": ..., "env": ...}`` request framed for the REPL's stdin."""
    payload: dict[str, Any] = {"cmd": code}
    if env is not None:
        payload["env"] = env
    return encode_request(payload)


def expected_env(command: dict[str, Any], next_env: int) -> tuple[int | None, int]:
    """(the env id the REPL's reply to ``command`` must carry, the next fresh env id).

    The REPL numbers environments in order, one per ``cmd``, ``path`` or ``unpickleEnvFrom``,
    and answers ``pickleTo`` with the env it pickled; other commands (tactic mode) carry no env
    (None: nothing to expect). A REPL-level error (``{"message": ...}``) consumes no id. Checked
    against every real transcript (tests/lean/test_real_transcripts.py).
    """
    if "pickleTo" in command:
        return command.get("env"), next_env
    if any(key in command for key in ("cmd", "path", "unpickleEnvFrom")):
        return next_env, next_env + 1
    return None, next_env


def split_blocks(text: str) -> Iterator[str]:
    """The non-empty blank-line-separated blocks of a transcript."""
    block: list[str] = []
    for line in text.splitlines():
        if line.strip():
            block.append(line)
        elif block:
            yield "\n".join(block)
            block = []
    if block:
        yield "\n".join(block)


def decode_block(block: str) -> dict[str, Any]:
    """One framed block -> a JSON object, or ProtocolError naming what was wrong."""
    try:
        value = json.loads(block)
    except json.JSONDecodeError as exc:
        raise ProtocolError(f"malformed JSON from the REPL ({exc.msg}): {block[:200]!r}") from None
    if not isinstance(value, dict):
        raise ProtocolError(f"expected a JSON object from the REPL, got {block[:200]!r}")
    return value


def _position(value: Any, field: str) -> tuple[int | None, int | None]:
    if value is None:
        return None, None
    if not isinstance(value, dict) or not isinstance(value.get("line"), int):
        raise ProtocolError(f"{field} must be {{'line', 'column'}}, got {value!r}")
    column = value.get("column")
    return value["line"], column if isinstance(column, int) else None


def parse_message(raw: Any) -> LeanMessage:
    """A REPL message object -> LeanMessage (line 1-based, column 0-based, as Lean reports)."""
    if not isinstance(raw, dict):
        raise ProtocolError(f"a message must be an object, got {raw!r}")
    severity, data = raw.get("severity"), raw.get("data")
    if not isinstance(severity, str) or not isinstance(data, str):
        raise ProtocolError(f"a message needs string 'severity' and 'data', got {raw!r}")
    line, column = _position(raw.get("pos"), "pos")
    end_line, end_column = _position(raw.get("endPos"), "endPos")
    return LeanMessage(severity, data, line, column, end_line, end_column)


def _parse_sorry(raw: Any) -> Sorry:
    if not isinstance(raw, dict) or not isinstance(raw.get("goal", ""), str):
        raise ProtocolError(f"a sorry must be an object with a string 'goal', got {raw!r}")
    line, column = _position(raw.get("pos"), "pos")
    return Sorry(raw.get("goal", ""), line, column)


def _list(obj: dict[str, Any], key: str) -> list[Any]:
    value = obj.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise ProtocolError(f"'{key}' must be a list, got {value!r}")
    return value


def parse_response(obj: dict[str, Any]) -> ReplResponse:
    """A decoded REPL answer -> ReplResponse; ProtocolError if its shape is not the REPL's."""
    if "message" in obj and "messages" not in obj:
        message = obj["message"]
        return ReplResponse(error=message if isinstance(message, str) else repr(message))
    env = obj.get("env")
    if env is not None and not isinstance(env, int):
        raise ProtocolError(f"'env' must be an integer, got {env!r}")
    return ReplResponse(
        env=env,
        messages=tuple(parse_message(m) for m in _list(obj, "messages")),
        sorries=tuple(_parse_sorry(s) for s in _list(obj, "sorries")),
    )
