"""A package's face: the names other packages import from it, loaded on first use.

Every package of gapscope declares its face in its ``__init__``: the names in ``__all__`` are
what other packages may import, and they import them from the package (``from gapscope.lean
import Status``), never from its modules (``tests/test_layers.py`` holds that). The face loads
each name only when it is first asked for (PEP 562), because a package's modules pull in very
different costs - ``gapscope.models.providers`` is imported by Inspect on every model lookup and
must not load torch, which ``gapscope.models.engine`` needs - and the CLI starts without any of
them. The ``TYPE_CHECKING`` imports beside the map give type checkers and readers the same
names statically; the layering test checks the two lists agree.

Why a name is written three times (the ``TYPE_CHECKING`` import, ``__all__``, the map) rather
than once as a plain import: measured on this project's 2-core machine, importing the command
line with the lazy faces takes 0.2-0.6 s (``gapscope --help`` 0.7 s wall), and loading every
name of the 12 faces takes 6-7 s (torch, Inspect, scipy, matplotlib). A plain import would
charge every command that second figure; mypy reads only the static lists, Python only the map.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_face(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: each name in ``exports`` is read from
    its module (a path relative to the package, ``".verdict"``) on first access and kept; a
    name mapped to its own module (``"contract": ".contract"``) is that module."""

    def __getattr__(name: str) -> Any:
        where = exports.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(where, package)
        value = module if where == f".{name}" else getattr(module, name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *exports})

    return __getattr__, __dir__
