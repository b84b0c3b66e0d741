"""T2's few-shot prompts: which exemplars (the policy of gapscope.t2.shots) and the turns."""

# ruff: noqa: RUF001  (Lean's double-struck N is meant, not a look-alike letter)

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessage

from gapscope.analysis.t2 import summarize_log
from gapscope.models.scripted import REQUESTS, script
from gapscope.t2.prompting import CONTEXTS
from gapscope.t2.records import T2Record
from gapscope.t2.shots import choose_exemplars
from gapscope.t2.task import t2

FIXTURE = Path(__file__).parent / "fixtures" / "records.jsonl"


def _record(rid: str, code: str, nl: str = "", before: str = "", after: str = "") -> T2Record:
    return T2Record(
        id=rid,
        target_code=code,
        formal_language="",
        natural_language=nl,
        target_code_name="",
        before_target_code=before,
        after_target_code=after,
        header="import Mathlib",
        dataset_name="test",
    )


TARGET = _record("m.target", "theorem target : 1 = 1 := rfl", nl="one is one")
POOL = [
    _record("z.late", "theorem late : 3 = 3 := rfl", nl="three"),
    TARGET,  # the target itself: never its own exemplar
    _record("a.def", "def a : ℕ := 1", nl="a number"),  # a definition for a theorem target
    _record("b.truncated", "theorem b {n : ℕ} (h : Odd (n", nl="cut"),  # no body
    _record("c.same_file", "theorem c : 2 = 2 := rfl", nl="two", before=TARGET.target_code),
    _record("d.no_nl", "theorem d : 4 = 4 := rfl"),
    _record("e.first", "theorem e : 5 = 5 := rfl", nl="five"),
    _record("e.first", "theorem e : 5 = 5 := rfl", nl="five"),  # a duplicated row
    _record("f.second", "theorem f : 6 = 6 := rfl", nl="six"),
]


def _nl(record: T2Record) -> str:
    return record.natural_language


def test_exemplars_are_the_first_usable_records_of_the_targets_type_by_id() -> None:
    # By id: a.def (a definition), b.truncated (no body), c.same_file (holds the target's
    # code), d.no_nl (no NL, shown under nl+st), e.first, e.first again, f.second, ...
    chosen = choose_exemplars(POOL, TARGET, 2, CONTEXTS["nl+st"], _nl, "pool.jsonl")
    assert [e.record.id for e in chosen] == ["e.first", "f.second"]
    # Without NL in the prompt, the record without NL is usable and comes first.
    chosen = choose_exemplars(POOL, TARGET, 2, CONTEXTS["st"], _nl, "pool.jsonl")
    assert [e.record.id for e in chosen] == ["d.no_nl", "e.first"]


def test_a_definition_target_gets_definition_exemplars() -> None:
    target = _record("q.def", "def q : ℕ := 7", nl="seven")
    chosen = choose_exemplars(POOL, target, 1, CONTEXTS["nl+st"], _nl, "pool.jsonl")
    assert [e.record.id for e in chosen] == ["a.def"]


def test_too_small_a_pool_names_the_pool_the_target_and_the_count() -> None:
    with pytest.raises(ValueError, match=r"shots=4: shot_pool .pool\.jsonl. has 3 usable theorem"):
        choose_exemplars(POOL, TARGET, 4, CONTEXTS["nl+st"], _nl, "pool.jsonl")
    with pytest.raises(ValueError, match=r"m\.target under context st"):
        choose_exemplars(POOL, TARGET, 5, CONTEXTS["st"], _nl, "pool.jsonl")


def test_an_exemplar_is_asked_as_the_target_is_and_answered_with_its_own_code() -> None:
    [exemplar] = choose_exemplars(POOL, TARGET, 1, CONTEXTS["nl"], _nl, "pool.jsonl")
    question, answer = exemplar.turns(CONTEXTS["nl"])
    assert "declaration `e`" in question and "five" in question
    assert answer.endswith("```lean\ntheorem e : 5 = 5 := rfl\n```")
    assert answer.startswith("THOUGHT:")


def _echo(messages: list[ChatMessage]) -> str:
    """The right answer of each fixture theorem (the prompts say which is asked)."""
    prompt = messages[-1].text
    if "declaration `double_eq`" in prompt:
        code = "theorem double_eq (n : ℕ) : double n = 2 * n := by\n  unfold double\n  omega"
    else:
        code = "theorem sq_nonneg' (x : ℤ) : 0 ≤ x ^ 2 := by positivity"
    return f"THOUGHT: ok.\n```lean\n{code}\n```"


def test_one_shot_run_shows_another_records_worked_answer_before_the_question(
    fake_lean: str, tmp_path: Path
) -> None:
    model = script("t2-shots", _echo)
    task = t2(data=str(FIXTURE), lean=fake_lean, context="st", shots=1)
    log = inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"))[0]
    assert log.status == "success"
    by_target = {}
    for messages in REQUESTS["t2-shots"]:
        roles = [m.role for m in messages]
        assert roles == ["system", "user", "assistant", "user"]
        asked = "double_eq" if "declaration `double_eq`" in messages[-1].text else "sq_nonneg'"
        by_target[asked] = messages
    # double_eq's exemplar is the other complete theorem, sq_nonneg' (its duplicate row and
    # the truncated theorem are passed over), and the other way round.
    assert "declaration `sq_nonneg'`" in by_target["double_eq"][1].text
    assert "by positivity" in by_target["double_eq"][2].text
    assert "declaration `double_eq`" in by_target["sq_nonneg'"][1].text
    assert "unfold double" in by_target["sq_nonneg'"][2].text
    assert {s.metadata["exemplars"][0] for s in log.samples or []} == {
        "fixture-1.double_eq",
        "fixture-2.sq_nonneg'",
    }
    summary = summarize_log(log, n_resamples=50)
    assert summary.to_dict()["shots"] == 1
    assert summary.prompting == "1-shot"
    assert all("[st, 1-shot]" in row.metric for row in summary.rows())


def test_a_shot_count_the_data_cannot_fill_stops_before_the_model(fake_lean: str) -> None:
    # Two complete theorems: each target has one exemplar, not two.
    with pytest.raises(ValueError, match=r"shots=2: shot_pool .* has 1 usable theorem"):
        t2(data=str(FIXTURE), lean=fake_lean, context="st", shots=2)


def test_shots_must_not_be_negative() -> None:
    with pytest.raises(ValueError, match="shots must be"):
        t2(data=str(FIXTURE), shots=-1)
