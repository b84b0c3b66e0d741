"""Inspect entry point: importing this module registers gapscope's tasks and model providers.

Inspect loads it through ``[project.entry-points.inspect_ai]`` so that
``inspect eval gapscope/s2b_lm`` and ``--model gapscope/embedded`` work without imports. The
tasks are those of every built-in diagnostic's spec (``task_modules`` in
:mod:`gapscope.analysis.table`); a third-party diagnostic registers its own tasks through its
own ``inspect_ai`` entry point.
"""

from importlib import import_module

from gapscope.analysis import BUILTINS
from gapscope.models import providers  # noqa: F401

for _spec in BUILTINS:
    for _module in _spec.task_modules:
        import_module(_module)
