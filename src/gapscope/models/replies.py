"""What a server said: the words of an error body, and a reply cut to one readable line.

Shared by the guarded transport (``http_guard``, which quotes a refused reply) and
``endpoint.describe_error`` (which quotes the server in a failed request's one line).
"""

from __future__ import annotations

import json

GUARD = "gapscope_guard"
"""The error type of a reply the guarded transport refused (see ``http_guard``)."""


def excerpt(content: bytes | str, limit: int = 300) -> str:
    text = content.decode("utf-8", "replace") if isinstance(content, bytes) else content
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


def server_words(body: object) -> str:
    """The message in an error body, in the shapes servers use (OpenAI's ``error.message``,
    FastAPI's ``detail``, a bare ``message`` or string)."""
    if isinstance(body, dict):
        for key in ("error", "detail", "message"):
            if key in body:
                return server_words(body[key])
        return excerpt(json.dumps(body))
    if isinstance(body, list) and body:
        return server_words(body[0])
    return excerpt(str(body))
