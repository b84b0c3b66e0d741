"""What gapscope knows of the parity task: its reader, its plan, its steering target, the spec.

The entry point ``gapscope.diagnostics`` names :data:`SPEC`; gapscope's ``profile`` plans
the task from it, ``run parity`` runs it, ``run steer --diagnostic parity`` steers it, and
``report`` and ``compare`` read parity logs through its reader. A right-or-wrong task needs
no reader of its own: gapscope's stock share-correct reader counts the samples its scorer
marked correct and shows the share with its Wilson interval.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gapscope.analysis.share import share_condition, share_reader
from gapscope.analysis.spec import Builder, DiagnosticSpec, Inputs, SteeringTarget
from gapscope_parity import TASK, parity


def plan(budget: Mapping[str, Any], inputs: Inputs, model: str) -> list[Builder]:
    """One task per model at the budget's arguments."""
    return [("numbers 1..{limit}".format(**budget), lambda: parity(**budget))]


SPEC = DiagnosticSpec(
    name="parity",
    title="parity",
    readers=(share_reader(TASK, "parity"),),
    plan=plan,
    budgets={"paper": {"limit": 100}, "quick": {"limit": 6}},
    task_modules=("gapscope_parity.task",),
    # steered runs are parity(**task args, steer=..., alpha=...); each point is the share of
    # numbers answered right, over the dosage curve's default grid
    steering=SteeringTarget(metric="accuracy", unit="%", condition=share_condition),
    docs="examples/gapscope-parity/README.md",
)
