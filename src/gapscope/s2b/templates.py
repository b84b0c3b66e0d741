"""The S2B-LM prompt and trace templates (``s2b/prompts/*.txt``)."""

from __future__ import annotations

from pathlib import Path

from gapscope.templates import Templates

template = Templates(Path(__file__).parent / "prompts")
