"""The report's plan section says each skip reason once, as ``profile`` prints it: a study of
three models without Lean skips three Lean diagnostics for each, nine entries, one reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gapscope.analysis.diagnostics import LoadedLogs
from gapscope.analysis.report import write_report
from gapscope.analysis.terminal import skip_lines

REASON = "needs a Lean backend: --lean local:DIR"


def _plan() -> dict[str, Any]:
    skipped = [
        {"diagnostic": d, "model": m, "reason": REASON}
        for m in ("m1", "m2", "none")
        for d in ("onng", "prove", "t2")
    ]
    skipped.append({"diagnostic": "ladder", "model": "m1", "reason": "needs --families FILE"})
    return {"tasks": [], "skipped": skipped, "totals": {"tasks": 0}}


def test_each_skip_reason_is_one_line_naming_its_diagnostics_and_models() -> None:
    assert skip_lines(_plan()) == [
        f"onng, prove, t2 (m1, m2, none): {REASON}",
        "ladder (m1): needs --families FILE",
    ]


def test_the_report_plan_says_each_skip_reason_once(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    write_report(LoadedLogs([], []), out, plan=_plan())
    page = out.read_text(encoding="utf-8")
    assert page.count(REASON) == 1
    assert "onng, prove, t2 (m1, m2, none): " in page
