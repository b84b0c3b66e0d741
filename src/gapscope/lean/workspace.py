"""Write a Lean workspace gapscope can check in: pinned toolchain, the REPL, given libraries.

The pins are the ones the REPL transcripts used in development came from (REPL commit
8948401, toolchain v4.33.0-rc2); both are parameters. This layer knows no diagnostic: a
diagnostic that wants a Lean library in the workspace (O-NNG its Peano arithmetic) passes it
in ``libraries`` (name -> source of its root module ``<name>.lean``), and checks can then send
``import <name>`` as their header. ``extra_files`` adds further files (e.g. submodules).

``checker`` builds a kernel judge into the workspace (``gapscope.lean.kernel`` finds it):
``comparator`` (the default) requires leanprover/comparator at the commit built for v4.33.0-rc2
and lean4export at the commit comparator's manifest pins; ``none`` adds nothing (local verdicts
then come from the REPL alone, ``repl-text``). ``safeverify`` is refused: SafeVerify has no
revision for v4.33 (its branches stop at v4.29; ``main`` targets v4.27 with Mathlib v4.27).
``gapscope`` is refused: gapscope's own checker is retired (docs/lean.md). ``mathlib`` adds
Mathlib at the commit the pinned REPL's own Mathlib tests use (tag v4.33.0-rc2). Neither
checker is a default build target, so a checker that fails to build never breaks the REPL's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from gapscope.lean.kernel import COMPARATOR_REV, LANDRUN_REV, LEAN4EXPORT_REV

DEFAULT_TOOLCHAIN = "leanprover/lean4:v4.33.0-rc2"
DEFAULT_REPL_REV = "8948401"
MATHLIB_REV = "51e6992efd06126df61a496bebf8f49482a4e129"
"""mathlib4 as pinned by ``test/Mathlib/lake-manifest.json`` of the REPL at 8948401 (inputRev
``v4.33.0-rc2``)."""

_LIBRARY_NAME = re.compile(r"[A-Z][A-Za-z0-9_]*")

_LAKEFILE = """\
name = "gapscope_lean"
defaultTargets = [{targets}]

[[require]]
name = "REPL"
git = "https://github.com/leanprover-community/repl"
rev = "{repl_rev}"
"""

_LEAN_LIB = """
[[lean_lib]]
name = "{library}"
"""

CHECKERS = ("comparator", "none")
REFUSED_CHECKERS = {
    "safeverify": "SafeVerify has no revision built for Lean v4.33 (its newest branch targets "
    "v4.29, main v4.27 with Mathlib v4.27); use --checker comparator",
    "gapscope": "gapscope's own checker is retired (it did not compile on v4.33.0-rc2 and mapped "
    "model-built .olean files; docs/lean.md); use --checker comparator",
}

_COMPARATOR = f"""
[[require]]
name = "Comparator"
git = "https://github.com/leanprover/comparator"
rev = "{COMPARATOR_REV}"

[[require]]
name = "lean4export"
git = "https://github.com/leanprover/lean4export"
rev = "{LEAN4EXPORT_REV}"
"""

_MATHLIB = f"""
[[require]]
name = "mathlib"
git = "https://github.com/leanprover-community/mathlib4"
rev = "{MATHLIB_REV}"
"""


def _check_library_name(name: str) -> None:
    if not _LIBRARY_NAME.fullmatch(name):
        raise ValueError(
            f"library name {name!r} must be a Lean module name: a capital letter, then letters, "
            "digits or underscores"
        )


def _check_checker(checker: str) -> None:
    if checker in REFUSED_CHECKERS:
        raise ValueError(f"--checker {checker}: {REFUSED_CHECKERS[checker]}")
    if checker not in CHECKERS:
        raise ValueError(f"checker must be one of {', '.join(CHECKERS)}, got {checker!r}")


def workspace_files(
    toolchain: str = DEFAULT_TOOLCHAIN,
    repl_rev: str = DEFAULT_REPL_REV,
    libraries: Mapping[str, str] | None = None,
    extra_files: Mapping[str, str] | None = None,
    checker: str = "comparator",
    mathlib: bool = False,
) -> dict[str, str]:
    """Relative path -> content of every file of the workspace (extra files override)."""
    libraries = dict(libraries or {})
    for name in libraries:
        _check_library_name(name)
    _check_checker(checker)
    lakefile = _LAKEFILE.format(
        targets=", ".join(f'"{name}"' for name in libraries), repl_rev=repl_rev
    ) + "".join(_LEAN_LIB.format(library=name) for name in libraries)
    if mathlib:
        lakefile += _MATHLIB
    if checker == "comparator":
        lakefile += _COMPARATOR
    files = {
        "lean-toolchain": toolchain.strip() + "\n",
        "lakefile.toml": lakefile,
        ".gitignore": "/.lake\n",
    }
    files.update({f"{name}.lean": source for name, source in libraries.items()})
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
    libraries: Mapping[str, str] | None = None,
    extra_files: Mapping[str, str] | None = None,
    checker: str = "comparator",
    mathlib: bool = False,
) -> list[Path]:
    """Write the workspace into ``directory``; FileExistsError if it is non-empty w/o force."""
    if directory.exists() and not directory.is_dir():
        raise FileExistsError(f"{directory} exists and is not a directory")
    if directory.is_dir() and any(directory.iterdir()) and not force:
        raise FileExistsError(f"{directory} is not empty; pass --force to write into it anyway")
    written: list[Path] = []
    files = workspace_files(toolchain, repl_rev, libraries, extra_files, checker, mathlib)
    for name, content in files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
        written.append(path)
    return written


def next_steps(directory: Path, have_elan: bool, checker: str = "comparator") -> list[str]:
    """The shell commands that turn the written files into a working, self-tested checker."""
    _check_checker(checker)
    build_checker = {
        "comparator": [
            "lake build Comparator/comparator lean4export/lean4export",
            f"go install github.com/zouuup/landrun/cmd/landrun@{LANDRUN_REV}"
            "  # comparator's sandbox, v0.1.17; its go.mod needs Go >= 1.24 (Debian 12 ships"
            " 1.19: take a release from https://go.dev/dl/ and put its bin/ first on PATH)",
        ],
        "none": [],
    }[checker]
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
        *build_checker,
        f"export GAPSCOPE_LEAN=local:{directory.resolve()}",
        f"gapscope lean selftest {directory.resolve()}",
        f"gapscope lean doctor --project {directory.resolve()}",
    ]
