"""Registers the `gapscope` model provider with Inspect.

Imported by `gapscope._registry` (the `inspect_ai` entry point), which Inspect loads
whenever it resolves any model name; so this module imports nothing heavy. torch and
transformers load only when a `gapscope/...` model is actually requested.
"""

from __future__ import annotations

from inspect_ai.model import ModelAPI, modelapi


@modelapi(name="gapscope")
def gapscope() -> type[ModelAPI]:
    """`gapscope/embedded` and `gapscope/hf/<checkpoint>` (see `inspect_api`)."""
    from gapscope.models.inspect_api import GapscopeModelAPI

    return GapscopeModelAPI
