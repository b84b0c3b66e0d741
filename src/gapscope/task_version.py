"""A task's version (``Task(version=...)``) and the fingerprint that says when to bump it.

Inspect records a task's ``version`` in every log (``eval.task_version``) and counts it in a
task's identity, so a log says which revision of the prompts and the scorer produced it, and
a study resumed after a change does not continue a log of the old revision. A version is only
worth that if it moves whenever the behaviour does: each task declares a :class:`Behaviour`,
the prompt templates it renders and the code that plays and scores it, and a test compares
its :meth:`Behaviour.fingerprint` with a committed table of ``task -> (version, fingerprint)``
(``tests/test_task_versions.py``). A fingerprint that moved under the same version fails
there, with the version to bump to.

The code is fingerprinted by its syntax tree with docstrings dropped, so a reworded docstring,
a comment or a reformat does not ask for a bump, while any change to what runs does.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any


@dataclass(frozen=True)
class Behaviour:
    """What a task's model sees and how its replies are scored, at one version."""

    version: int
    """The task's version (``Task(version=...)``): 1 for the first recorded revision."""
    prompts: tuple[Path, ...] = ()
    """The prompt template files the task renders."""
    texts: tuple[str, ...] = ()
    """Prompt text kept in code rather than in a template file (a plugin's one-line prompt)."""
    code: tuple[Callable[..., Any] | ModuleType, ...] = ()
    """The solvers, scorers and prompt-building functions (or whole modules) that define what
    the task asks and how it judges the reply."""

    def fingerprint(self) -> str:
        """A short hash of the prompts' text and the code's docstring-free syntax trees."""
        digest = hashlib.sha256()
        for path in self.prompts:
            digest.update(f"prompt {path.name}\n".encode())
            digest.update(path.read_bytes())
        for text in self.texts:
            digest.update(b"text\n" + text.encode())
        for unit in self.code:
            digest.update(f"code {_qualified_name(unit)}\n".encode())
            digest.update(code_tree(unit).encode())
        return digest.hexdigest()[:16]


def code_tree(unit: Callable[..., Any] | ModuleType) -> str:
    """A function's (through its decorators' wrappers) or a module's source as its syntax tree
    writes it back, less every docstring and comment and in one layout: what the code does,
    not how it reads. Unparsed rather than dumped: a dump lists every field of a node, and
    Python releases add fields (3.12's ``type_params``) where the written-back code holds."""
    source = textwrap.dedent(inspect.getsource(_unwrapped(unit)))
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            node.body = [stmt for stmt in node.body if not _is_docstring(stmt)] or [ast.Pass()]
    return ast.unparse(tree)


def _unwrapped(unit: Callable[..., Any] | ModuleType) -> Callable[..., Any] | ModuleType:
    return unit if isinstance(unit, ModuleType) else inspect.unwrap(unit)


def _qualified_name(unit: Callable[..., Any] | ModuleType) -> str:
    if isinstance(unit, ModuleType):
        return unit.__name__
    target = inspect.unwrap(unit)
    return f"{target.__module__}.{target.__qualname__}"


def _is_docstring(stmt: ast.stmt) -> bool:
    """A bare string statement: a docstring, or an attribute's docstring below it."""
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )
