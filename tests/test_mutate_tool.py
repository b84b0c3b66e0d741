"""``make mutate``'s written reasons stay attached: each names a mutant the job still makes
(function, change and line as written), so an edit to a target cannot leave a reason that
excuses nothing, or a survivor excused by a reason written for other code."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

TOOL = Path(__file__).resolve().parents[1] / "tools" / "mutate.py"


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gapscope_mutate_tool", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while building
    spec.loader.exec_module(module)
    return module


def test_every_written_reason_names_a_mutant_the_job_makes() -> None:
    tool = _tool()
    made = {(m.function, m.change, m.source) for t in tool.TARGETS for m in tool.mutants(t)}
    assert set(tool.EQUIVALENT) <= made, set(tool.EQUIVALENT) - made


def test_the_report_flags_a_survivor_without_a_reason() -> None:
    tool = _tool()
    rows = [
        {"target": "t", "function": "f", "line": 1, "change": "1 -> 2", "source": "x = 1"},
        {"target": "t", "function": "f", "line": 2, "change": "Eq -> NotEq", "source": "y"},
    ]
    rows[0]["outcome"], rows[1]["outcome"] = "killed", "survived"
    text = tool.report(rows)
    assert "t: 1/2 killed (50.0 %), 0 equivalent, 1 survived" in text
    assert "survived: t: f line 2: Eq -> NotEq (no test)" in text
