"""Write a Lean workspace gapscope can check in: pinned toolchain, the REPL, our library.

The pins are the ones the REPL transcripts used in development came from (REPL commit
8948401, toolchain v4.33.0-rc2); both are parameters. ``extra_files`` lets the O-NNG layer
put its Peano-arithmetic library into ``GapscopeNNG/`` without this module knowing about it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path, PurePosixPath

DEFAULT_TOOLCHAIN = "leanprover/lean4:v4.33.0-rc2"
DEFAULT_REPL_REV = "8948401"
LIBRARY = "GapscopeNNG"

_LAKEFILE = """\
name = "gapscope_lean"
defaultTargets = ["{library}"]

[[require]]
name = "REPL"
git = "https://github.com/leanprover-community/repl"
rev = "{repl_rev}"

[[lean_lib]]
name = "{library}"
"""

_PLACEHOLDER = f"""\
/-!
# {LIBRARY}

Placeholder written by `gapscope lean setup`. The O-NNG diagnostic replaces it with its own
Peano-arithmetic library; checks that use it send `import {LIBRARY}` as their header.
-/
"""


def workspace_files(
    toolchain: str = DEFAULT_TOOLCHAIN,
    repl_rev: str = DEFAULT_REPL_REV,
    extra_files: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Relative path -> content of every file of the workspace (extra files override)."""
    files = {
        "lean-toolchain": toolchain.strip() + "\n",
        "lakefile.toml": _LAKEFILE.format(library=LIBRARY, repl_rev=repl_rev),
        f"{LIBRARY}.lean": _PLACEHOLDER,
        ".gitignore": "/.lake\n",
    }
    for name, content in (extra_files or {}).items():
        path = PurePosixPath(name)
        if path.is_absolute() or ".." in path.parts or not path.parts:
            raise ValueError(f"extra file {name!r} must be a relative path inside the workspace")
        files[path.as_posix()] = content
    return files


def write_workspace(
    directory: Path,
    *,
    force: bool = False,
    toolchain: str = DEFAULT_TOOLCHAIN,
    repl_rev: str = DEFAULT_REPL_REV,
    extra_files: Mapping[str, str] | None = None,
) -> list[Path]:
    """Write the workspace into ``directory``; FileExistsError if it is non-empty w/o force."""
    if directory.exists() and not directory.is_dir():
        raise FileExistsError(f"{directory} exists and is not a directory")
    if directory.is_dir() and any(directory.iterdir()) and not force:
        raise FileExistsError(f"{directory} is not empty; pass --force to write into it anyway")
    written: list[Path] = []
    for name, content in workspace_files(toolchain, repl_rev, extra_files).items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
        written.append(path)
    return written


def next_steps(directory: Path, have_elan: bool) -> list[str]:
    """The shell commands that turn the written files into a working checker."""
    steps = (
        []
        if have_elan
        else [
            "curl https://raw.githubusercontent.com/leanprover/elan/master/elan-init.sh -sSf | sh",
        ]
    )
    return steps + [
        f"cd {directory}",
        "lake update",
        "lake build",
        "lake build REPL/repl",
        f"export GAPSCOPE_LEAN=local:{directory.resolve()}",
        f"gapscope lean doctor --project {directory.resolve()}",
    ]
