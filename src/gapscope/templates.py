"""Prompt templates kept as text files beside the code (``<package>/prompts/*.txt``).

Keeping every sentence a model reads in files makes prompts reviewable in one place and keeps
them byte-stable: the same inputs render the same prompt.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path


class Templates:
    """The templates of one prompts folder, read once and cached."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def __call__(self, name: str) -> str:
        """The text of ``<directory>/<name>.txt`` without its final newline."""
        return _read(self.directory / f"{name}.txt")


@cache
def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8").rstrip("\n")
