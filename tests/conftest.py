"""Shared fixtures: the scripted Inspect model provider (`gapscope.models.scripted`).

Tests import ``script`` and ``REQUESTS`` from here; importing this module registers the
``scripted/<name>`` provider for the whole session.
"""

from __future__ import annotations

from gapscope.models.scripted import REQUESTS, script

__all__ = ["REQUESTS", "script"]
