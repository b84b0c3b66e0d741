"""The report's notes in reading order: what changes how a headline is read first, by model
(the first table's order) and diagnostic; a model's other notes next; notes of no model last;
an identical note once, saying how many logs made it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gapscope.analysis.diagnostics import LoadedLog, LoadedLogs
from gapscope.analysis.notes import Note, ranked
from gapscope.analysis.profile import GapRow
from gapscope.analysis.report import write_report
from gapscope.analysis.spec import LogReader
from gapscope.analysis.view import View


def test_reading_notes_first_by_model_then_other_notes_then_generic_ones_once() -> None:
    notes = [
        Note("9 pairs of models share no diagnostic"),
        Note("T2, b: rules gapscope", "b", "T2", False, "b1.eval"),
        Note("S2B-LM, b: every answer same", "b", "S2B-LM", True, "b2.eval"),
        Note("OracleLadder, a: 16 of 16 rollouts unboxed", "a", "OracleLadder", True, "a1.eval"),
        Note("S2B-LM, a: cut by the window", "a", "S2B-LM", True, "a2.eval"),
        Note("S2B-LM, a: cut by the window", "a", "S2B-LM", True, "a3.eval"),
        Note("9 pairs of models share no diagnostic"),
    ]
    assert ranked(notes, ["a", "b"]) == [
        "S2B-LM, a: cut by the window (in 2 logs)",  # diagnostics in the order noted
        "OracleLadder, a: 16 of 16 rollouts unboxed",
        "S2B-LM, b: every answer same",
        "T2, b: rules gapscope",
        "9 pairs of models share no diagnostic",
    ]


@dataclass
class Noted:
    """A summary with notes, some of them declared as warnings (None: all of them are)."""

    model: str
    notes: list[str]
    warnings: list[str] | None = None

    def rows(self) -> list[GapRow]:
        return [GapRow.share(self.model, "Fake", "metric", 1, 2, f"{self.model}.eval")]

    def outcomes(self) -> dict[str, dict[str, bool]]:
        return {}


def _never(*args: object) -> View:
    raise AssertionError("the report reads no log and shows no view here")


READER = LogReader("fake", "Fake", _never, _never)


def test_the_report_ranks_and_counts_its_notes(tmp_path: Path) -> None:
    how = "the counting rules used"
    logs = [
        LoadedLog(
            Path("a1.eval"), READER, Noted("a", [how, "every answer same"], ["every answer same"])
        ),
        LoadedLog(
            Path("a2.eval"), READER, Noted("a", [how, "every answer same"], ["every answer same"])
        ),
        LoadedLog(Path("b.eval"), READER, Noted("b", ["no boxed answer"])),  # all are warnings
    ]
    report = write_report(
        LoadedLogs(logs, ["x.eval is superseded by its retry y.eval"]), tmp_path / "r.html"
    )
    assert report.notes[:3] == [
        "Fake, a: every answer same (in 2 logs)",
        "Fake, b: no boxed answer",
        f"Fake, a: {how} (in 2 logs)",
    ]
    generic = report.notes[3:]  # the logs' own, then the comparisons'
    assert generic[0] == "x.eval is superseded by its retry y.eval"
    assert len(generic) == 2 and generic[1].startswith("a vs b: ")
    assert report.glance["a"]["Fake"].warnings == ("every answer same", "every answer same")
