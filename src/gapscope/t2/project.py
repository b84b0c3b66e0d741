"""A Lean project's files as T2 reads them: modules, their imports, and each record's
successors across the whole project.

T2 tests a target with every declaration that depends on it, wherever it lives ("lake build
the whole dependency chain"). In the file track those are in ``after_target_code``; in the
repository track (``--repo``) a target's dependents are also in the modules that import its
module, directly or through others. ``ProjectIndex.successors`` finds them with the same rule
as in a file (:func:`gapscope.t2.successors.successors_in`: an identifier token naming the
target or an earlier successor), over the target's file after it, then each dependent module
in import order (a module after every module it imports), so a dependent of a dependent in
another file is found too.
"""

from __future__ import annotations

import os
import re
from functools import cached_property
from pathlib import Path

from gapscope.t2.declarations import Declaration, split_declarations
from gapscope.t2.records import T2Record
from gapscope.t2.successors import Successor, successors_in, target_identity

_IMPORT = re.compile(r"^(?:public\s+)?(?:meta\s+)?import\s+(?:all\s+)?(.+)$", re.MULTILINE)
"""An import line, the module system's ``public``/``meta``/``all`` forms included."""
_SKIP_DIRS = {".lake", "lake-packages", ".git"}


def module_of(path: str) -> str:
    """``Math2001/Homework/hw2.lean`` -> ``Math2001.Homework.hw2``."""
    return path.removesuffix(".lean").replace("/", ".")


class OutsideProject(ValueError):
    """A project file that is a link leading out of the project."""


def lean_files(project: Path) -> list[Path]:
    """The project's own ``.lean`` files (not its dependencies' or build outputs), sorted.

    OutsideProject for any link, to a file or to a folder, whose real path lies outside the
    project (``Shadow.lean -> /etc/shadow``, ``Vendor -> /home/me/other``): what T2 reads,
    hashes and hands to Lean as the project's source must be the project's, and ``lake``
    follows a linked folder that a walk of the project would not enter, so such a project is
    refused, not silently trimmed. Links inside the project are kept (their targets are read
    where they lie)."""
    root = project.resolve()
    found: list[Path] = []
    for folder, folders, files in os.walk(project):  # links to folders are listed, not entered
        here = Path(folder)
        folders[:] = [f for f in folders if f not in _SKIP_DIRS]
        for name in (*folders, *files):
            _refuse_outside(here / name, project, root)
        found += [here / name for name in files if name.endswith(".lean")]
    return sorted(found)


def _refuse_outside(path: Path, project: Path, root: Path) -> None:
    if not path.is_symlink():
        return
    real = path.resolve()
    if not real.is_relative_to(root):
        kind = "folder" if real.is_dir() else "file"
        raise OutsideProject(
            f"{path} is a link to {real}, outside the project: remove it or copy the {kind}"
            f" in (a project's sources must lie inside {project})"
        )


NOT_MODULES = frozenset({"lakefile.lean"})
"""``.lean`` files of a project that are not modules of it."""


def project_modules(project: Path) -> dict[str, str]:
    """Module name -> path (relative, POSIX) of every module of the project's own sources."""
    return {
        module_of(rel): rel
        for rel in (p.relative_to(project).as_posix() for p in lean_files(project))
        if rel not in NOT_MODULES
    }


def imports_in(text: str) -> set[str]:
    """The modules a file's ``import`` lines name."""
    return {name for line in _IMPORT.findall(text) for name in line.split()}


def _closure(imports: dict[str, set[str]], module: str) -> set[str]:
    """The modules that import ``module``, directly or through others."""
    found: set[str] = set()
    frontier = {module}
    while frontier:
        frontier = {m for m, deps in imports.items() if deps & frontier and m not in found}
        found |= frontier
    found.discard(module)
    return found


def dependents(project: Path, module: str) -> list[str]:
    """Modules of ``project`` that import ``module``, directly or through others, sorted."""
    imports = {
        module_of(p.relative_to(project).as_posix()): imports_in(
            p.read_text(encoding="utf-8", errors="replace")
        )
        for p in lean_files(project)
    }
    return sorted(_closure(imports, module))


class ProjectIndex:
    """One project's files, read once: what an audit of many records needs from it.

    Every module's declarations are split and lexed once, into an index from each dotted
    name component to the declarations that mention it; a record's successors in other
    modules are then found by following that index from the target's name (and its in-file
    successors' names), and only those candidates go through ``successors_in``, which gives
    the same answer as a scan of every declaration of every dependent module.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._orders: dict[str, list[str]] = {}

    @cached_property
    def _texts(self) -> dict[str, str]:
        return {
            module: (self.root / path).read_text(encoding="utf-8", errors="replace")
            for module, path in project_modules(self.root).items()
        }

    @cached_property
    def _imports(self) -> dict[str, set[str]]:
        return {module: imports_in(text) for module, text in self._texts.items()}

    @cached_property
    def _declarations(self) -> dict[str, list[Declaration]]:
        return {
            module: [d for d in split_declarations(text) if d.is_declaration]
            for module, text in self._texts.items()
        }

    @cached_property
    def _mentions(self) -> dict[str, list[tuple[str, int]]]:
        """Name component -> (module, index) of each declaration whose code mentions it."""
        index: dict[str, list[tuple[str, int]]] = {}
        for module, declarations in self._declarations.items():
            for i, d in enumerate(declarations):
                for part in d.name_parts:
                    index.setdefault(part, []).append((module, i))
        return index

    def in_import_order(self, modules: set[str]) -> list[str]:
        """``modules`` with each after every one of them it imports (ties by name)."""
        placed: list[str] = []
        left = set(modules)
        while left:
            ready = sorted(m for m in left if not (self._imports[m] & left))
            if not ready:  # an import cycle (Lean refuses it): keep the rest by name
                ready = sorted(left)
            placed += ready
            left -= set(ready)
        return placed

    def _dependents(self, module: str) -> list[str]:
        if module not in self._orders:
            self._orders[module] = self.in_import_order(_closure(self._imports, module))
        return self._orders[module]

    def successors(self, record: T2Record, module: str) -> list[Successor]:
        """The record's successors in the project: after the target in its own file (the
        module ``module``, where the target must occur once; else there are none), then in
        every module importing it. Line numbers are per file."""
        text = self._texts.get(module)
        if text is None or text.count(record.target_code) != 1:
            return []
        target = target_identity(record)
        suffix = text[text.index(record.target_code) + len(record.target_code) :]
        in_file = [d for d in split_declarations(suffix) if d.is_declaration]
        named = {s.name for s in successors_in(in_file, target)}
        reached = {target.short_name}
        reached |= {d.short_name for d in in_file if d.name in named and d.short_name}
        rank = {m: n for n, m in enumerate(self._dependents(module))}
        picked: set[tuple[str, int]] = set()
        frontier = list(reached)
        while frontier:
            for place in self._mentions.get(frontier.pop(), ()):
                if place[0] not in rank or place in picked:
                    continue
                picked.add(place)
                short = self._declarations[place[0]][place[1]].short_name
                if short is not None and short not in reached:
                    reached.add(short)
                    frontier.append(short)
        ordered = sorted(picked, key=lambda place: (rank[place[0]], place[1]))
        later = in_file + [self._declarations[m][i] for m, i in ordered]
        return successors_in(later, target)
