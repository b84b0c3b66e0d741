"""Sample verdicts against the fake REPL: renamed, sorry, failing successors, attribution."""

# ruff: noqa: RUF001  (Lean's double-struck N and Z are meant, not look-alike letters)

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from gapscope.lean.backend import CheckRequest
from gapscope.lean.local import LocalBackend
from gapscope.lean.screen import attributes_in
from gapscope.lean.verdict import CONTROL_CHECK, LeanVerdict, Status
from gapscope.t2.evaluate import SampleOutcome, SampleResult, evaluate_answer, settle
from gapscope.t2.extract import Answer, AnswerStatus, extract_answer
from gapscope.t2.programs import build_programs
from gapscope.t2.records import T2Record, load_records
from gapscope.t2.successors import target_identity
from tests.t2.conftest import fake_options

FIXTURE = Path(__file__).parent / "fixtures" / "records.jsonl"


@pytest.fixture
def record() -> T2Record:
    return load_records(FIXTURE).records[0]  # five successors s1..s5


@pytest.fixture
def backend(project: Path) -> Iterator[LocalBackend]:
    with LocalBackend(project, **fake_options(t2=True)) as backend:
        yield backend


def _reply(code: str) -> str:
    return f"THOUGHT: double is n + n.\n```lean\n{code}\n```"


GOOD = "theorem double_eq (n : ℕ) : double n = 2 * n := by\n  unfold double\n  omega"


def _evaluate(record: T2Record, backend: LocalBackend, reply: str) -> dict[str, object]:
    answer = extract_answer(reply, target_identity(record))
    return evaluate_answer(record, answer, backend.check_many, timeout_s=10).to_dict()


def test_a_right_answer_passes_everything(record: T2Record, backend: LocalBackend) -> None:
    result = _evaluate(record, backend, _reply(GOOD))
    assert result["outcome"] == SampleOutcome.CHECKED
    assert (result["compiles"], result["ta"], result["ta_strict"]) == (True, True, True)
    assert result["graded"] == 1.0 and result["successors"] == 5


def test_a_renamed_declaration_is_renamed_and_not_checked(record: T2Record) -> None:
    def never(requests: Sequence[CheckRequest]) -> list[LeanVerdict]:
        raise AssertionError("a renamed answer must not reach Lean")

    reply = _reply(GOOD.replace("double_eq", "double_eq'"))
    answer = extract_answer(reply, target_identity(record))
    result = evaluate_answer(record, answer, never, timeout_s=10)
    assert result.outcome == SampleOutcome.RENAMED == "renamed"
    assert not (result.compiles or result.ta or result.ta_strict)
    assert "double_eq'" in result.detail


def test_a_definition_in_place_of_the_theorem_is_renamed(record: T2Record) -> None:
    reply = _reply("def double_eq (n : ℕ) : ℕ := 2 * n")
    assert extract_answer(reply, target_identity(record)).status.value == "renamed"


def test_sorry_in_the_target_compiles_and_passes_parity_but_not_strict(
    record: T2Record, backend: LocalBackend
) -> None:
    reply = _reply("theorem double_eq (n : ℕ) : double n = 2 * n := by\n  sorry")
    result = _evaluate(record, backend, reply)
    assert (result["compiles"], result["ta"], result["ta_strict"]) == (True, True, False)


def test_successors_own_sorry_does_not_fail_strict(project: Path) -> None:
    record = load_records(FIXTURE).records[1]  # successor ``other`` is a sorry stub
    reply = _reply("theorem sq_nonneg' (x : ℤ) : 0 ≤ x ^ 2 := by positivity")
    with LocalBackend(project, **fake_options(t2=True)) as backend:
        result = _evaluate(record, backend, reply)
    assert (result["ta"], result["ta_strict"], result["graded"]) == (True, True, 1.0)


def test_an_error_in_one_of_five_successors_fails_ta_graded_point_eight(
    record: T2Record, backend: LocalBackend
) -> None:
    reply = _reply(GOOD + " -- fake-breaks: s3")
    result = _evaluate(record, backend, reply)
    assert result["compiles"] is True
    assert result["ta"] is False and result["ta_strict"] is False
    assert result["graded"] == pytest.approx(0.8)
    assert result["failing_successors"] == ["s3"]


def test_two_failing_successors_are_each_attributed(
    record: T2Record, backend: LocalBackend
) -> None:
    reply = _reply(GOOD + " -- fake-breaks: s2, s5")
    result = _evaluate(record, backend, reply)
    assert result["failing_successors"] == ["s2", "s5"]
    assert result["errors"] == {
        "before": 0,
        "generated": 0,
        "successors": [0, 1, 0, 0, 1],
        "unplaced": 0,
        "unrelated": 0,
    }
    assert result["graded"] == pytest.approx(0.6)


def test_an_error_in_the_generated_code_fails_compile(
    record: T2Record, backend: LocalBackend
) -> None:
    reply = _reply(GOOD.replace("omega", "omega -- fake-error"))
    result = _evaluate(record, backend, reply)
    assert (result["compiles"], result["ta"]) == (False, False)
    assert result["errors"]["generated"] == 1  # type: ignore[index]


def test_the_screen_refuses_before_lean(record: T2Record) -> None:
    def never(requests: Sequence[CheckRequest]) -> list[LeanVerdict]:
        raise AssertionError("a screened answer must not reach Lean")

    answer = extract_answer(_reply(GOOD + "\n#eval 1"), target_identity(record))
    result = evaluate_answer(record, answer, never, timeout_s=10, screen=lambda code: "uses #eval")
    assert (result.outcome, result.detail) == (SampleOutcome.FORBIDDEN, "uses #eval")


def test_the_default_screen_is_the_lean_layers_whitelist(record: T2Record) -> None:
    def never(requests: Sequence[CheckRequest]) -> list[LeanVerdict]:
        raise AssertionError("a screened answer must not reach Lean")

    answer = extract_answer(
        _reply(GOOD + '\n#eval IO.Process.run {cmd := "id"}'), target_identity(record)
    )
    result = evaluate_answer(record, answer, never, timeout_s=10)
    assert result.outcome is SampleOutcome.FORBIDDEN
    assert "#eval" in (result.detail or "")


def test_a_backend_failure_is_a_server_error_not_a_verdict(record: T2Record) -> None:
    def broken(requests: Sequence[CheckRequest]) -> list[LeanVerdict]:
        return [LeanVerdict(Status.VALID), LeanVerdict(Status.SERVER_ERROR, detail="REPL died")]

    answer = extract_answer(_reply(GOOD), target_identity(record))
    result = evaluate_answer(record, answer, broken, timeout_s=10)
    assert result.outcome == SampleOutcome.SERVER_ERROR and result.detail == "REPL died"
    assert not result.ta


def test_a_check_the_answer_broke_on_a_healthy_backend_is_a_failed_answer(
    record: T2Record,
) -> None:
    def crashed(requests: Sequence[CheckRequest]) -> list[LeanVerdict]:
        return [
            LeanVerdict(Status.VALID),
            LeanVerdict(Status.SERVER_ERROR, detail="REPL died", checks=(CONTROL_CHECK,)),
        ]

    answer = extract_answer(_reply(GOOD), target_identity(record))
    result = evaluate_answer(record, answer, crashed, timeout_s=10)
    assert result.outcome == SampleOutcome.BROKE_CHECK and not result.ta


def test_an_evaluation_that_raises_on_the_answer_alone_is_a_failed_answer(
    record: T2Record,
) -> None:
    answer = Answer(AnswerStatus.OK, record.target_code + "\n-- a comment the checker trips on")

    def picky(r: T2Record, a: Answer) -> SampleResult:
        if a.code != r.target_code:
            raise RecursionError("maximum recursion depth exceeded")
        return SampleResult(SampleOutcome.CHECKED, compiles=True, ta=True)

    def broken(r: T2Record, a: Answer) -> SampleResult:
        raise OSError("lake is gone")

    blamed = settle(picky, record, answer)
    assert blamed.outcome == SampleOutcome.BROKE_CHECK and "RecursionError" in blamed.detail
    machine = settle(broken, record, answer)
    assert machine.outcome == SampleOutcome.SERVER_ERROR and "lake is gone" in machine.detail


def test_a_timeout_fails_every_verdict(record: T2Record) -> None:
    def slow(requests: Sequence[CheckRequest]) -> list[LeanVerdict]:
        return [LeanVerdict(Status.VALID), LeanVerdict(Status.TIMEOUT)]

    answer = extract_answer(_reply(GOOD), target_identity(record))
    result = evaluate_answer(record, answer, slow, timeout_s=10)
    assert (result.compiles, result.ta, result.graded) == (True, False, 0.0)


def test_programs_put_the_answer_in_the_targets_place(record: T2Record) -> None:
    programs = build_programs(record, GOOD, timeout_s=5)
    lines = programs.full.code.split("\n")
    assert programs.compile.code == programs.full.code[: len(programs.compile.code)]
    assert lines[programs.generated.start - 1].startswith("theorem double_eq")
    spans = [lines[s.start - 1 : s.end - 1] for s in programs.successor_spans]
    heads = [next(line for line in span if not line.startswith("/--")) for span in spans]
    assert [h.split()[1] for h in heads] == ["s1", "s2", "s3", "s4", "s5"]
    assert spans[3][0] == "/-- uses the target through `s1` too -/"  # s4 from its doc comment
    assert programs.full.header == "import Mathlib"


def test_the_targets_own_attributes_pass_the_screen_and_no_others(
    record: T2Record, backend: LocalBackend
) -> None:
    """A project's custom attribute on the target (math2001's ``@[autograded]``) is allowed in
    the answer, so the ground truth passes its own screen; any other stays refused."""
    tagged = replace(record, target_code="@[autograded] " + record.target_code)
    assert attributes_in(tagged.target_code) == {"autograded"}
    result = _evaluate(tagged, backend, _reply("@[autograded] " + GOOD))
    assert result["outcome"] == SampleOutcome.CHECKED and result["ta"] is True
    refused = _evaluate(record, backend, _reply("@[autograded] " + GOOD))
    assert refused["outcome"] == SampleOutcome.FORBIDDEN == "forbidden_command"
    other = _evaluate(tagged, backend, _reply("@[implemented_by foo] " + GOOD))
    assert other["outcome"] == SampleOutcome.FORBIDDEN and "implemented_by" in other["detail"]
