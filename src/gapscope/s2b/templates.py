"""Prompt and trace templates, kept as text files beside the code (``prompts/*.txt``).

Keeping every sentence a model reads in files makes prompts reviewable in one place and keeps
them byte-stable: the same seed renders the same prompt.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PROMPTS = Path(__file__).parent / "prompts"


@cache
def template(name: str) -> str:
    """The text of ``prompts/<name>.txt`` without its final newline."""
    return (_PROMPTS / f"{name}.txt").read_text(encoding="utf-8").rstrip("\n")
