"""The house's one-way layering, checked on every import in ``src/gapscope``.

DESIGN.md: app -> analysis -> diagnostics -> floors -> base, nothing points up, and no two
packages import each other (directly or round a longer loop). Every import counts: module
level, inside functions (lazy) and under ``TYPE_CHECKING``, since each one is a dependency a
reader has to hold in mind and a lazy one only hides it from start-up time.

A ``__main__`` module is a program (``python -m gapscope.verify``), never imported by anything,
so it is ranked with ``app`` whatever package it sits in.
"""

from __future__ import annotations

import ast
import shutil
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

from gapscope.analysis.table import BUILTINS

SRC = Path(__file__).resolve().parents[1] / "src" / "gapscope"
DIAGNOSTIC_PACKAGES = sorted(
    {module.split(".")[1] for spec in BUILTINS for module in spec.task_modules}
)
"""The packages of the built-in diagnostics, read from the diagnostic table."""

LAYERS: dict[str, int] = {
    "app": 4,
    "_registry": 4,  # the Inspect entry point: registers every task and provider
    "analysis": 3,
    # every built-in diagnostic's package (the table names them), and steering
    **dict.fromkeys((*DIAGNOSTIC_PACKAGES, "steer"), 2),
    **dict.fromkeys(("models", "lean", "verify", "stats"), 1),
    **dict.fromkeys(
        (
            "",
            "_face",
            "records",
            "templates",
            "process_shared",
            "log_metadata",
            "params",
            "task_version",
        ),
        0,
    ),
}
"""Rank of each top-level unit of ``gapscope`` (a sub-package or a root module)."""


@dataclass(frozen=True)
class Import:
    """One import statement: who imports whom, where."""

    source: str  # importing module, dotted
    target: str  # imported module, dotted (a submodule when ``from pkg import sub`` names one)
    file: Path
    line: int

    def where(self, root: Path) -> str:
        return f"{self.file.relative_to(root.parent)}:{self.line}"


def module_name(file: Path, root: Path) -> str:
    parts = list(file.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def imports_in(root: Path) -> list[Import]:
    """Every ``gapscope`` import under ``root``; ``from a import b`` targets ``a.b`` when that is
    a module, so a package ``__init__`` that only re-exports is not a false dependency."""
    modules = {module_name(f, root) for f in root.rglob("*.py")}
    found: list[Import] = []
    for file in sorted(root.rglob("*.py")):
        source = module_name(file, root)
        tree = ast.parse(file.read_text(encoding="utf-8"), str(file))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(node, source, file.name == "__init__.py")
                subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in modules]
                targets = subs or [base]
            else:
                continue
            found += [Import(source, t, file, node.lineno) for t in targets if _ours(t)]
    return found


def _ours(target: str) -> bool:
    return target == "gapscope" or target.startswith("gapscope.")


def unit(module: str) -> str:
    """The top-level unit a module belongs to: ``gapscope.lean.pool`` -> ``lean``; a program
    (``__main__``) belongs to ``app``."""
    parts = module.split(".")
    if parts[-1] == "__main__":
        return "app"
    return parts[1] if len(parts) > 1 else ""


def rank(module: str) -> int:
    name = unit(module)
    if name not in LAYERS:
        raise AssertionError(f"{module}: unit {name!r} has no layer in tests/test_layers.py")
    return LAYERS[name]


def upward(imports: list[Import]) -> list[Import]:
    """Imports from a lower layer into a higher one."""
    return [i for i in imports if rank(i.target) > rank(i.source)]


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        component.append(top)
                        if top == node:
                            break
                    if len(component) > 1:
                        out.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return out


def package_cycles(imports: list[Import]) -> list[tuple[list[str], list[Import]]]:
    """Loops between top-level units, each with the imports that close it."""
    graph: dict[str, set[str]] = defaultdict(set)
    for i in imports:
        a, b = unit(i.source), unit(i.target)
        if a != b and b:
            graph[a].add(b)
            graph.setdefault(b, set())
    return [
        (
            cycle,
            [
                i
                for i in imports
                if unit(i.source) != unit(i.target)
                and {unit(i.source), unit(i.target)} <= set(cycle)
            ],
        )
        for cycle in _cycles(graph)
        if cycle
    ]


def module_cycles(imports: list[Import]) -> list[list[str]]:
    """Loops between modules (``a`` imports ``b`` and ``b`` imports ``a``, at any distance)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for i in imports:
        if i.source != i.target:
            graph[i.source].add(i.target)
            graph.setdefault(i.target, set())
    return _cycles(graph)


def problems(root: Path) -> list[str]:
    """Every layering fault under ``root``, one line each, naming the file and line."""
    imports = imports_in(root)
    lines = [
        f"{i.where(root)}: {i.source} imports {i.target}, a higher layer" for i in upward(imports)
    ]
    for cycle, closing in package_cycles(imports):
        sites = ", ".join(sorted({f"{i.where(root)} ({i.target})" for i in closing}))
        lines.append(f"package cycle {' <-> '.join(cycle)}: {sites}")
    lines += [f"module cycle {' <-> '.join(c)}" for c in module_cycles(imports)]
    return lines


def test_nothing_points_up_and_nothing_loops() -> None:
    assert problems(SRC) == []


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the real source tree to plant faults in."""
    copy = tmp_path / "gapscope"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__", "*.txt", "*.jsonl"))
    return copy


def _plant(file: Path, line: str) -> int:
    text = file.read_text(encoding="utf-8")
    file.write_text(text + f"\n\ndef _planted() -> None:\n    {line}\n", encoding="utf-8")
    return text.count("\n") + 4


def test_a_lazy_upward_import_is_named_with_its_file_and_line(tree: Path) -> None:
    line = _plant(tree / "lean" / "pool.py", "from gapscope.analysis import logs  # noqa")
    found = problems(tree)
    assert any(p.startswith(f"gapscope/lean/pool.py:{line}: ") for p in found), found
    assert any("gapscope.analysis.logs, a higher layer" in p for p in found)


def test_a_type_checking_import_of_app_is_caught(tree: Path) -> None:
    file = tree / "analysis" / "profile.py"
    file.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import gapscope.app.kit\n"
        + file.read_text(encoding="utf-8"),
        encoding="utf-8",
    )
    assert "gapscope/analysis/profile.py:3: gapscope.analysis.profile imports gapscope.app.kit" in (
        "\n".join(problems(tree))
    )


def test_a_cycle_between_two_diagnostics_is_caught(tree: Path) -> None:
    _plant(tree / "s2b" / "metrics.py", "from gapscope.ladder import taxonomy  # noqa")
    _plant(tree / "ladder" / "taxonomy.py", "from gapscope.s2b import metrics  # noqa")
    found = problems(tree)
    assert any(p.startswith("package cycle ladder <-> s2b: ") for p in found), found
    assert any(p == "module cycle gapscope.ladder.taxonomy <-> gapscope.s2b.metrics" for p in found)


def test_relative_imports_resolve_like_absolute_ones(tree: Path) -> None:
    line = _plant(tree / "verify" / "normalize.py", "from ..s2b import metrics  # noqa")
    assert any(p.startswith(f"gapscope/verify/normalize.py:{line}: ") for p in problems(tree))
