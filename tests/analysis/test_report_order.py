"""What a newcomer reads first: the models under test before the reference players, and the
plan's skips once per reason, as ``profile`` prints them (a study of three models without Lean
skips three Lean diagnostics for each: nine entries, one reason)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from gapscope.analysis.diagnostics import LoadedLog, LoadedLogs
from gapscope.analysis.logs import RunInfo
from gapscope.analysis.profile import GapRow
from gapscope.analysis.report import write_report
from gapscope.analysis.spec import LogReader
from gapscope.analysis.terminal import skip_lines
from gapscope.analysis.view import View

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


@dataclass
class OneRow:
    model: str

    def rows(self) -> list[GapRow]:
        return [GapRow.share(self.model, "Fake", "adj-ZSCT", 1, 2, f"{self.model}.eval")]

    def outcomes(self) -> dict[str, dict[str, bool]]:
        return {}


def _read(log: object) -> OneRow:
    raise AssertionError("the report is given summaries, it reads no log here")


def _no_view(summary: object, options: object) -> View:
    raise AssertionError("the report shows no view")


READER = LogReader("fake", "Fake", _read, _no_view)
INFO = RunInfo("fake", "", {}, {}, "success", "x.eval", None, None)


def _loaded(row_model: str, run_model: str) -> LoadedLog:
    info = replace(INFO, model=run_model)
    return LoadedLog(Path(f"{row_model}.eval"), READER, OneRow(row_model), info)


def test_models_under_test_come_before_the_reference_players(tmp_path: Path) -> None:
    # Inspect records ``--model none`` as ``none/none`` in a log
    logs = [
        _loaded("random speaker", "none/none"),
        _loaded("hf/m", "hf/m"),
        _loaded("rule", "none"),
    ]
    report = write_report(LoadedLogs(logs, []), tmp_path / "r.html")
    assert [r.model for r in report.rows] == ["hf/m", "random speaker", "rule"]
    page = report.html.read_text(encoding="utf-8")
    assert page.index(">hf/m</th>") < page.index(">random speaker</th>")
