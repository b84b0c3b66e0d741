"""BEqL / BEq+ of T2 answers (gapscope.t2.beq): statements, programs, verdicts, the readout."""

# ruff: noqa: RUF001  (Lean's double-struck N and Z are meant, not look-alike letters)

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessage
from rich.console import Console

from gapscope.analysis.logs import sample_score
from gapscope.analysis.t2 import summarize_log
from gapscope.analysis.t2_tables import print_t2
from gapscope.lean import CheckRequest, LeanMessage, LeanVerdict, Status
from gapscope.models.scripted import script
from gapscope.t2.beq import (
    PLUS_STRATEGIES,
    direction_program,
    equivalence,
    proved,
    renamed,
    statement,
)
from gapscope.t2.records import T2Record
from gapscope.t2.task import t2

FIXTURE = Path(__file__).parent / "fixtures" / "records.jsonl"


def test_the_statement_ends_at_the_first_top_level_assignment() -> None:
    code = (
        '/-- doc -/\n@[simp] theorem foo (h : a = {x := 1}.1) (s : "a:=b" = s) : a = 1 := by simp'
    )
    assert statement(code) == 'theorem foo (h : a = {x := 1}.1) (s : "a:=b" = s) : a = 1'
    assert statement("private lemma bar : True := trivial") == "private lemma bar : True"
    assert statement("def three : ℕ := 3") is None
    assert statement("theorem cut (n : ℕ) : n = n") == "theorem cut (n : ℕ) : n = n"


def test_renaming_keeps_modifiers_and_layout() -> None:
    theorem = "protected theorem Nat.foo\n    (n : ℕ) : n = n"
    assert (
        renamed(theorem, "beq_base_theorem")
        == "protected theorem beq_base_theorem\n    (n : ℕ) : n = n"
    )


def test_a_direction_admits_the_base_and_proves_the_target_from_it() -> None:
    program = direction_program("theorem a : 1 = 1", "theorem b : 1 = 1", "exact?")
    assert program == (
        "theorem beq_base_theorem : 1 = 1 := sorry\n\n"
        "theorem beq_target_theorem : 1 = 1 := by\n  try intros\n  try symm_saturate\n  exact?"
    )
    converted = direction_program("theorem a : 1 = 1", "theorem b : 1 = 1", "convert 3")
    lines = converted.splitlines()
    assert "  convert (config := .unfoldSameFun) beq_base_theorem using 3" in lines
    # the cascade is two tactic lines, not the release's one line with a literal backslash-n
    assert lines[-2] == "  all_goals intros" and lines[-1].startswith("  first | (all_goals try")


def _verdict(*messages: tuple[str, str]) -> LeanVerdict:
    found = tuple(LeanMessage(severity, text, line=3) for severity, text in messages)
    errors = any(m.severity == "error" for m in found)
    return LeanVerdict(Status.LEAN_ERROR if errors else Status.SORRY, found)


def test_a_direction_is_proved_by_a_suggestion_naming_the_base_or_no_error() -> None:
    assert proved(_verdict(("info", "Try this: exact beq_base_theorem h")))
    assert proved(_verdict(("warning", "declaration uses 'sorry'")))
    assert not proved(_verdict(("info", "Try this: exact beq_base_theorem"), ("error", "x")))
    assert not proved(_verdict(*[("warning", "declaration uses 'sorry'")] * 2))
    assert not proved(LeanVerdict(Status.TIMEOUT))


RECORD = T2Record(
    id="r.t",
    target_code="theorem t : 1 = 1 := rfl",
    formal_language="",
    natural_language="",
    target_code_name="theorem t",
    before_target_code="",
    after_target_code="",
    header="import Mathlib",
    dataset_name="test",
)


class Scripted:
    """Proves exactly the programs whose strategy line is in ``proving``."""

    def __init__(self, proving: set[str]) -> None:
        self.proving = proving
        self.asked: list[CheckRequest] = []

    def __call__(self, requests: Sequence[CheckRequest]) -> list[LeanVerdict]:
        self.asked.extend(requests)
        return [
            _verdict() if any(s in r.code for s in self.proving) else _verdict(("error", "no"))
            for r in requests
        ]


def test_beql_needs_exact_in_both_directions_and_beq_plus_one_strategy_in_both() -> None:
    backend = Scripted({"  exact?"})
    found = equivalence(RECORD, "theorem t : 1 = 1 := by simp", backend, 5.0)
    # every program ends its exact? strategy with "  exact?": both directions are proved
    assert found is not None and (found.beql, found.beq_plus, found.strategy) == (
        True,
        True,
        "exact?",
    )
    assert len(backend.asked) == 2
    backend = Scripted({"using 2"})
    found = equivalence(RECORD, "theorem t : 1 = 1 := by simp", backend, 5.0)
    assert found is not None and (found.beql, found.beq_plus, found.strategy) == (
        False,
        True,
        "convert 2",
    )
    assert len(backend.asked) == 2 + 2 * len(PLUS_STRATEGIES)
    assert equivalence(RECORD, "def t : ℕ := 1", backend, 5.0) is None  # no theorem answered


ANSWERS = {
    # the original statement: equivalent by exact?
    "double_eq": "theorem double_eq (n : ℕ) : double n = 2 * n := by\n  unfold double\n  omega",
    # the same up to parentheses: not by exact?, by apply (the fake's stand-in); still TA
    "sq_nonneg'": "theorem sq_nonneg' (x : ℤ) : 0 ≤ (x ^ 2) := by positivity",
}


def _answer(messages: list[ChatMessage]) -> str:
    name = next(n for n in ANSWERS if f"declaration `{n}`" in messages[-1].text)
    return f"THOUGHT: ok.\n```lean\n{ANSWERS[name]}\n```"


def test_run_reports_compile_ta_and_beq_side_by_side(fake_lean: str, tmp_path: Path) -> None:
    model = script("t2-beq", _answer)
    task = t2(data=str(FIXTURE), lean=fake_lean, context="st", beq=True)
    log = inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"))[0]
    assert log.status == "success"
    verdicts = {}
    for sample in log.samples or []:
        score = sample_score(sample)
        assert score is not None and score.metadata is not None
        verdicts[sample.metadata["id"]] = (score.metadata["beql"], score.metadata["beq_plus"])
    assert verdicts == {"fixture-1.double_eq": (True, True), "fixture-2.sq_nonneg'": (False, True)}
    summary = summarize_log(log, n_resamples=50)
    assert summary.contexts["st"]["beq"] == {
        "samples": 2,
        "compile": 1.0,
        "ta": 1.0,
        "beql": 0.5,
        "beq_plus": 1.0,
    }
    rows = {row.metric: row.value for row in summary.rows()}
    assert rows["BEqL [st]"] == 50.0 and rows["BEq+ [st]"] == 100.0
    console = Console(record=True, width=200)
    print_t2(summary, console)
    assert "compile vs TA vs BEq" in console.export_text()


def test_beq_is_refused_in_the_repository_track(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="drop repo or beq"):
        t2(data=str(FIXTURE), repo=str(tmp_path), beq=True)


def _real_lean_missing() -> str | None:
    import os
    import shutil

    if shutil.which("lean") is None or shutil.which("lake") is None:
        return "lean/lake not on PATH (install elan; see docs/lean.md)"
    if not os.environ.get("GAPSCOPE_LEAN", "").startswith("local:"):
        return "set GAPSCOPE_LEAN=local:DIR to a Mathlib workspace from `gapscope lean setup DIR`"
    return None


@pytest.mark.lean
@pytest.mark.skipif(_real_lean_missing() is not None, reason=_real_lean_missing() or "")
def test_real_lean_tells_an_equivalent_statement_from_a_false_one() -> None:
    import os

    from gapscope.lean.factory import open_backend

    record = T2Record(
        id="real.comm",
        target_code="theorem comm (a b : ℕ) : a + b = b + a := Nat.add_comm a b",
        formal_language="",
        natural_language="",
        target_code_name="theorem comm",
        before_target_code="",
        after_target_code="",
        header="import Mathlib",
        dataset_name="test",
    )
    with open_backend(os.environ["GAPSCOPE_LEAN"], max_workers=1) as backend:
        swapped = equivalence(
            record, "theorem comm (a b : ℕ) : b + a = a + b := by omega", backend.check_many, 120.0
        )
        false = equivalence(
            record,
            "theorem comm (a b : ℕ) : a + b = b + a + 1 := by sorry",
            backend.check_many,
            120.0,
        )
    assert swapped is not None and swapped.beql
    assert false is not None and not false.beql and not false.beq_plus
