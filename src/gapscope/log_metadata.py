"""Typed log metadata handed to Inspect, which takes a plain ``dict[str, Any]``.

Each diagnostic declares what it writes into its log as ``TypedDict``s (its ``contract``
module), so the task and the analysis reader name the same keys and mypy checks both. A
``TypedDict`` is not a ``dict[str, Any]`` to the type checker (it is read-only in its value
types), so the task passes it through :func:`plain` at the Inspect boundary.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def plain(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The same keys and values as a plain dictionary (a shallow copy)."""
    return dict(metadata)
