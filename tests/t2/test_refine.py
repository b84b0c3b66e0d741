"""T2's rounds of compile feedback (gapscope.t2.refine): what is handed back, and the loop."""

# ruff: noqa: RUF001  (Lean's double-struck N is meant, not a look-alike letter)

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalSample
from inspect_ai.model import ChatMessage
from rich.console import Console

from gapscope.analysis.logs import sample_score
from gapscope.analysis.t2 import summarize_log
from gapscope.analysis.t2_tables import print_t2
from gapscope.lean import CheckRequest, LeanMessage, LeanVerdict, Status
from gapscope.models.scripted import REQUESTS, script
from gapscope.t2.extract import Answer, AnswerStatus
from gapscope.t2.records import T2Record
from gapscope.t2.refine import MAX_MESSAGES, compile_attempt
from gapscope.t2.task import t2

FIXTURE = Path(__file__).parent / "fixtures" / "records.jsonl"
RIGHT = "theorem double_eq (n : ℕ) : double n = 2 * n := by\n  unfold double\n  omega"
RECORD = T2Record(
    id="r.double_eq",
    target_code=RIGHT,
    formal_language="",
    natural_language="",
    target_code_name="theorem double_eq",
    before_target_code="def double (n : ℕ) : ℕ := n + n\n",
    after_target_code="theorem s1 (n : ℕ) : double n = n * 2 := by\n  rw [double_eq]; ring\n",
    header="import Mathlib",
    dataset_name="test",
)


class Backend:
    """Answers every check with ``verdict`` and keeps what it was asked."""

    def __init__(self, verdict: LeanVerdict) -> None:
        self.verdict = verdict
        self.asked: list[CheckRequest] = []

    def __call__(self, requests: Sequence[CheckRequest]) -> list[LeanVerdict]:
        self.asked.extend(requests)
        return [self.verdict for _ in requests]


def _scored(sample: EvalSample) -> tuple[object, dict[str, Any]]:
    """A sample's score value and metadata."""
    score = sample_score(sample)
    assert score is not None
    return score.value, score.metadata or {}


def _error(line: int | None, text: str) -> LeanMessage:
    return LeanMessage("error", text, line=line)


def test_errors_are_handed_back_with_their_line_in_the_answer() -> None:
    # The compile program is the code before (line 1), a blank line, then the answer from
    # line 3: Lean's line 4 is the answer's line 2, line 1 the code before's line 1.
    verdict = LeanVerdict(
        Status.LEAN_ERROR,
        (
            _error(4, "unknown identifier 'omegaa'"),
            LeanMessage("warning", "unused variable", line=3),
            _error(1, "boom"),
            _error(None, "somewhere"),
        ),
    )
    backend = Backend(verdict)
    tried = compile_attempt(RECORD, Answer(AnswerStatus.OK, RIGHT), backend, 30.0)
    assert tried.status == "lean_error"
    assert tried.feedback is not None
    assert "- line 2 of your declaration: unknown identifier 'omegaa'" in tried.feedback
    assert "- line 1 of the code before it: boom" in tried.feedback
    assert "- the file: somewhere" in tried.feedback
    assert "unused variable" not in tried.feedback  # warnings are not errors
    assert "`double_eq`" in tried.feedback
    # Only the compile program was checked: the successors (the test) never were.
    [request] = backend.asked
    assert "s1" not in request.code and request.code.endswith("omega")


def test_a_compiling_answer_ends_the_rounds() -> None:
    tried = compile_attempt(
        RECORD, Answer(AnswerStatus.OK, RIGHT), Backend(LeanVerdict(Status.SORRY)), 30.0
    )
    assert tried.status == "compiles" and tried.feedback is None


def test_an_answer_that_never_reaches_lean_gets_its_reason() -> None:
    backend = Backend(LeanVerdict(Status.VALID))
    renamed = Answer(AnswerStatus.RENAMED, None, "declares `other`, not `double_eq`")
    tried = compile_attempt(RECORD, renamed, backend, 30.0)
    assert tried.status == "renamed"
    assert tried.feedback is not None and "declares `other`, not `double_eq`" in tried.feedback
    assert backend.asked == []


def test_a_timeout_says_so_and_a_backend_failure_says_nothing() -> None:
    answer = Answer(AnswerStatus.OK, RIGHT)
    timed_out = compile_attempt(RECORD, answer, Backend(LeanVerdict(Status.TIMEOUT)), 45.0)
    assert timed_out.status == "timeout"
    assert timed_out.feedback is not None and "45 s" in timed_out.feedback
    broken = compile_attempt(RECORD, answer, Backend(LeanVerdict(Status.SERVER_ERROR)), 45.0)
    assert broken.status == "server_error" and broken.feedback is None


def test_at_most_max_messages_errors_are_shown() -> None:
    many = tuple(_error(3, f"error number {i}") for i in range(MAX_MESSAGES + 5))
    tried = compile_attempt(
        RECORD, Answer(AnswerStatus.OK, RIGHT), Backend(LeanVerdict(Status.LEAN_ERROR, many)), 1.0
    )
    assert tried.feedback is not None
    assert f"error number {MAX_MESSAGES - 1}" in tried.feedback
    assert f"error number {MAX_MESSAGES}\n" not in tried.feedback
    assert "and 5 more errors" in tried.feedback


FIXED = {
    "double_eq": RIGHT,
    "sq_nonneg'": "theorem sq_nonneg' (x : ℤ) : 0 ≤ x ^ 2 := by positivity",
}


def _learns(messages: list[ChatMessage]) -> str:
    """Wrong on the first try (a line Lean rejects), right once shown Lean's errors."""
    question = next(m.text for m in messages if m.role == "user")
    name = next(n for n in FIXED if f"declaration `{n}`" in question)
    code = FIXED[name]
    if not messages[-1].text.startswith("Lean rejects"):
        code += "\n  -- fake-error"
    return f"THOUGHT: try.\n```lean\n{code}\n```"


def _stubborn(messages: list[ChatMessage]) -> str:
    """Wrong every time."""
    question = next(m.text for m in messages if m.role == "user")
    name = next(n for n in FIXED if f"declaration `{n}`" in question)
    return f"THOUGHT: again.\n```lean\n{FIXED[name]}\n  -- fake-error\n```"


def test_feedback_rounds_revise_until_the_answer_compiles(fake_lean: str, tmp_path: Path) -> None:
    model = script("t2-refine", _learns)
    task = t2(data=str(FIXTURE), lean=fake_lean, context="st", refine=3)
    log = inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"))[0]
    assert log.status == "success"
    # Two samples, each asked twice: the first answer, then once with the errors.
    conversations = REQUESTS["t2-refine"]
    assert len(conversations) == 4
    second = [c for c in conversations if len(c) > 2]
    assert len(second) == 2
    for conversation in second:
        assert [m.role for m in conversation] == ["system", "user", "assistant", "user"]
        # the fake REPL's error sits on the answer's last line (its 4th or 2nd)
        assert "of your declaration: fake error" in conversation[-1].text
    scores = [_scored(s) for s in log.samples or []]
    assert [meta["refine_trail"] for _, meta in scores] == [["lean_error", "compiles"]] * 2
    assert [meta["refine_revisions"] for _, meta in scores] == [1, 1]
    assert all(value == "C" for value, _ in scores)
    summary = summarize_log(log, n_resamples=50)
    done = summary.contexts["st"]["refinement"]
    assert done == {
        "samples": 2,
        "first_compile": 0.0,
        "compile": 1.0,
        "revised": 2,
        "revisions": 2,
        "fixed": 2,
    }
    assert summary.prompting == "refine 3"
    console = Console(record=True, width=300)
    print_t2(summary, console)
    text = console.export_text()
    assert "first answers compile 0.0 %, last answers 100.0 % of 2 samples" in text


def test_rounds_stop_at_refine_and_the_last_answer_is_scored(
    fake_lean: str, tmp_path: Path
) -> None:
    model = script("t2-stubborn", _stubborn)
    task = t2(data=str(FIXTURE), lean=fake_lean, context="st", refine=2, limit=1)
    log = inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"))[0]
    assert len(REQUESTS["t2-stubborn"]) == 3  # the first answer and two revisions
    [sample] = log.samples or []
    value, meta = _scored(sample)
    assert meta["refine_trail"] == ["lean_error", "lean_error"]
    assert meta["refine_revisions"] == 2
    assert meta["compiles"] is False and value == "I"
    done = summarize_log(log, n_resamples=50).contexts["st"]["refinement"]
    assert done is not None and (done["revised"], done["fixed"]) == (1, 0)


def test_refine_is_refused_where_there_is_no_compile_feedback(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="repository track"):
        t2(data=str(FIXTURE), repo=str(tmp_path), refine=1)
    with pytest.raises(ValueError, match="ground_truth asks no model"):
        t2(data=str(FIXTURE), ground_truth=True, refine=1)
    with pytest.raises(ValueError, match="refine must be"):
        t2(data=str(FIXTURE), refine=-1)


def test_the_plan_counts_every_round(fake_lean: str) -> None:
    from gapscope.app.study import plan_of

    # two records under context st, k = 2, one answer and up to 3 revisions each
    task = t2(data=str(FIXTURE), lean=fake_lean, context="st", refine=3, k=2)
    assert plan_of(task, "scripted/x", "t2", "t2").generations == 2 * 2 * (1 + 3)
    plain = t2(data=str(FIXTURE), lean=fake_lean, context="st", k=2)
    assert plan_of(plain, "scripted/x", "t2", "t2").generations == 2 * 2
