"""Every package has a face, and other packages import through it.

A package's ``__init__`` declares ``__all__``: the names other packages may use. Imports across
packages name the package (``from gapscope.lean import Status``), never one of its modules, so
a module can move inside its package without touching the packages that use it, and a reader
sees in one file what a package offers. The faces load lazily (:mod:`gapscope._face`); their
``TYPE_CHECKING`` imports, ``__all__`` and lazy map must list the same names, and each name
must resolve.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "gapscope"


def _package_of(module: str) -> str | None:
    """``gapscope.lean.pool`` -> ``gapscope.lean`` when ``lean`` is a package, else None."""
    parts = module.split(".")
    if len(parts) < 2 or not (SRC / parts[1] / "__init__.py").exists():
        return None
    return ".".join(parts[:2])


def _module_of(file: Path) -> str:
    parts = list(file.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _declared_all(tree: ast.Module) -> ast.expr | None:
    """The value ``__all__`` is assigned in a package ``__init__``, if it is."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return node.value
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "__all__":
            return node.value
    return None


def _face_names(package: str) -> set[str]:
    init = SRC.parent.joinpath(*package.split("."), "__init__.py")
    value = _declared_all(ast.parse(init.read_text(encoding="utf-8")))
    return set() if value is None else set(ast.literal_eval(value))


def _base(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    parts = module.split(".") if is_package else module.split(".")[:-1]
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join([*parts, *([node.module] if node.module else [])])


def bypasses(root: Path = SRC) -> list[str]:
    """Imports that reach into another package's modules, or for a name its face lacks."""
    out: list[str] = []
    for file in sorted(root.rglob("*.py")):
        source = _module_of(file)
        home = _package_of(source)
        tree = ast.parse(file.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            where = f"{file.relative_to(root.parent)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Import):
                for alias in node.names:
                    package = _package_of(alias.name)
                    if package and package != home and alias.name != package:
                        out.append(f"{where}: import {alias.name} (use {package}'s face)")
            elif isinstance(node, ast.ImportFrom):
                base = _base(node, source, file.name == "__init__.py")
                package = _package_of(base)
                if package is None or package == home or not base.startswith("gapscope"):
                    continue
                if base != package:
                    out.append(f"{where}: from {base} import ... (use {package}'s face)")
                    continue
                missing = [a.name for a in node.names if a.name not in _face_names(package)]
                if missing:
                    out.append(f"{where}: {package}.__all__ lacks {', '.join(missing)}")
    return out


def test_packages_import_each_other_through_their_faces() -> None:
    assert bypasses() == []


PACKAGES = sorted(_module_of(f) for f in SRC.rglob("__init__.py"))


@pytest.mark.parametrize("package", PACKAGES)
def test_every_face_lists_what_it_loads_and_every_name_resolves(package: str) -> None:
    names = _face_names(package)
    init = SRC.parent.joinpath(*package.split("."), "__init__.py")
    tree = ast.parse(init.read_text(encoding="utf-8"))
    assert _declared_all(tree) is not None, f"{package} declares no __all__"
    static: set[str] = set()
    lazy: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            static |= {
                a.asname or a.name
                for n in node.body
                if isinstance(n, ast.ImportFrom)
                for a in n.names
            }
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "lazy_face":
            lazy |= {ast.literal_eval(k) for k in node.args[1].keys}  # type: ignore[attr-defined]
    assert static == lazy, f"{package}: TYPE_CHECKING imports and the lazy map differ"
    assert lazy <= names, f"{package}: loads names its __all__ does not list"
    module = importlib.import_module(package)
    for name in sorted(names):
        assert getattr(module, name) is not None, f"{package}.{name}"
