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
        return _read(self.path(name))

    def path(self, name: str) -> Path:
        """The file of template ``name``: what a task's version fingerprint reads
        (:class:`gapscope.task_version.Behaviour`)."""
        return self.directory / f"{name}.txt"

    def paths(self, *names: str) -> tuple[Path, ...]:
        """The files of ``names``, or of every template in the folder when none is named."""
        if not names:
            return tuple(sorted(self.directory.glob("*.txt")))
        return tuple(self.path(name) for name in names)


@cache
def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8").rstrip("\n")
