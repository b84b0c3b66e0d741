"""T2 answers whose heads the axiom queries once misread (against the fake REPL in T2 mode).

``open Foo.in`` is a whole command (``Foo.in`` is one identifier), so the ``axiom`` and the
target after it are declarations the soundness rule must query; ``theorem target.{u}`` names
``target``. Read once by ``gapscope.lean.heads`` for the splitter and the queries."""

# ruff: noqa: RUF001  (Lean's double-struck N and Greek letters are meant)

from __future__ import annotations

from pathlib import Path

from gapscope.lean.local import LocalBackend
from gapscope.t2.evaluate import SampleOutcome, evaluate_answer
from gapscope.t2.extract import extract_answer
from gapscope.t2.records import T2Record, load_records
from gapscope.t2.successors import target_identity
from tests.t2.conftest import fake_options

FIXTURE = Path(__file__).parent / "fixtures" / "records.jsonl"


def _evaluate(record: T2Record, project: Path, code: str) -> dict[str, object]:
    answer = extract_answer(f"```lean\n{code}\n```", target_identity(record))
    with LocalBackend(project, **fake_options(t2=True)) as backend:
        return evaluate_answer(record, answer, backend.check_many, timeout_s=10).to_dict()


def test_a_user_axiom_behind_open_dotted_in_fails_strict_ta(project: Path) -> None:
    record = load_records(FIXTURE).records[0]  # double_eq, five successors
    code = (
        "namespace Foo.in\nend Foo.in\n"
        "open Foo.in axiom cheat : False\n"
        "open Foo.in theorem double_eq (n : ℕ) : double n = 2 * n := cheat.elim"
    )
    result = _evaluate(record, project, code)
    assert result["outcome"] == SampleOutcome.CHECKED
    assert (result["compiles"], result["ta"]) == (True, True)
    assert result["ta_strict"] is False  # it was True: nothing queried the axiom


def test_an_honest_answer_with_explicit_universes_compiles_and_passes(project: Path) -> None:
    target = "theorem target.{u} (α : Sort u) (a : α) : a = a := rfl"
    after = "\ntheorem s1 : (1 : Nat) = 1 := target Nat 1\n"
    record = T2Record(
        id="made.target",
        target_code=target,
        formal_language=target + after,
        natural_language="",
        target_code_name="theorem target",
        before_target_code="",
        after_target_code=after,
        header="import Mathlib",
        dataset_name="made",
        line=1,
    )
    result = _evaluate(record, project, target)
    assert result["outcome"] == SampleOutcome.CHECKED
    assert (result["compiles"], result["ta"], result["ta_strict"]) == (True, True, True)
