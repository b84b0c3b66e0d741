"""Hostile model output through extraction, the screen and the soundness rule, with the fake
REPL standing in for a credulous Lean (it reports no error and standard axioms unless the code
says ``sorry``/``sorryAx``/``native_decide``/``axiom`` or cannot parse): not one is VALID.

The replies live in ``tests/lean/hostile/<target>/``; a file's name says the outcome expected,
``<status>--<what it tries>``. Each target also runs one honest reply through the same path, so
"nothing is VALID" cannot come from a pipeline that never says VALID.
"""

# ruff: noqa: RUF001  (Lean's double-struck N and R are meant, not look-alike letters)

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from string import Template

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessage

import gapscope.onng.task as onng_task
from gapscope.analysis.onng import records_from_log
from gapscope.lean.local import LocalBackend
from gapscope.lean.screen import screen_code
from gapscope.lean.verdict import Status
from gapscope.models.scripted import script
from gapscope.onng.problemset import load_problem_set
from gapscope.prove.checking import check_reply
from gapscope.prove.problems import Problem
from gapscope.t2.evaluate import lean_screen
from tests.lean.test_acceptance import ATTACKS, HONEST

HOSTILE = Path(__file__).parent / "hostile"
STATEMENT = "theorem sq_sum (a b : ℝ) (h₀ : 0 < a ∧ 0 < b) :\n    2 * a * b ≤ a ^ 2 + b ^ 2 := by"
PROBLEM = Problem("sq_sum", "test", "import Mathlib\n\n", STATEMENT)
HONEST_PROOF = f"```lean4\n{STATEMENT}\n  nlinarith [sq_nonneg (a - b)]\n```"
Make = Callable[..., LocalBackend]


def expected(path: Path) -> str:
    return path.stem.split("--")[0]


def replies(target: str) -> list[Path]:
    return sorted((HOSTILE / target).iterdir())


def test_prove_hostile_replies_are_never_valid(make_backend: Make) -> None:
    lean = make_backend(max_workers=1)
    files = replies("prove")
    assert len(files) >= 25
    outcomes = {}
    for path in files:
        attempt = check_reply(lean, path.read_text(encoding="utf-8"), PROBLEM, timeout_s=10)
        verdict = attempt.verdict
        outcomes[path.stem] = verdict.status.value if verdict else attempt.extraction.status.value
        if verdict is not None and verdict.status is Status.FORBIDDEN:
            assert "forbidden command `" in verdict.detail
    assert Status.VALID.value not in outcomes.values()
    assert outcomes == {path.stem: expected(path) for path in files}
    honest = check_reply(lean, HONEST_PROOF, PROBLEM, timeout_s=10).verdict
    assert honest is not None and honest.valid, honest


_TARGET = re.compile(r"Target:\n```lean\n(.*?) := by\n  sorry", re.DOTALL)


def test_onng_hostile_replies_are_never_valid(
    make_backend: Make, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    files = replies("onng")
    problems = load_problem_set().problems[: len(files) + 1]
    honest = '{"draft": "reflexivity", "code": "$target := by rfl"}'
    templates = [path.read_text(encoding="utf-8") for path in files] + [honest]
    by_header = {p.header(): Template(t) for p, t in zip(problems, templates, strict=True)}

    def reply(messages: list[ChatMessage]) -> str:
        match = _TARGET.search(messages[-1].text)
        assert match is not None
        header = match[1]
        name = header.split()[1]
        return by_header[header].substitute(
            target=json.dumps(header)[1:-1], name=json.dumps(name)[1:-1]
        )

    lean = make_backend(max_workers=2)
    monkeypatch.setattr(onng_task, "open_checker", lambda spec, **_: lean)
    task = onng_task.onng(lams="0", modules="all", limit=len(problems), lean="fake")
    log = inspect_eval(
        task, model=script("onng-hostile", reply), log_dir=str(tmp_path), display="none"
    )[0]
    assert log.status == "success", log.error
    status = {r.problem: r.status for r in records_from_log(log)}
    wanted = {p.name: expected(f) for p, f in zip(problems, files, strict=False)}
    assert {name: status[name] for name in wanted} == wanted
    assert status[problems[-1].name] == Status.VALID.value  # the honest reply
    assert list(status.values()).count(Status.VALID.value) == 1


@pytest.mark.parametrize("path", replies("t2"), ids=lambda p: p.stem)
def test_t2_hostile_declarations_are_screened_out(path: Path) -> None:
    found = screen_code(path.read_text(encoding="utf-8"))
    assert found is not None, path.name
    assert found.verdict().status is Status.FORBIDDEN


def test_t2_honest_declaration_passes_the_screen() -> None:
    assert screen_code("theorem t2 (x : ℝ) (h : 0 < x) : 0 < x ^ 2 := by\n  sorry") is None


_HIDING_NAMES = {
    "comment": ("def «--» : Nat := 1 ", ""),
    "quote": ('def «"» : Nat := 1 ', '\ndef «"» : Nat := 2'),
    "block": ("def «/-» : Nat := 1 ", "\ndef «-/» : Nat := 2"),
}
"""A name that once hid the rest of the line from the screen, and what closes what it opens."""


@pytest.mark.parametrize("name", sorted(_HIDING_NAMES))
@pytest.mark.parametrize("path", replies("t2"), ids=lambda p: p.stem)
def test_t2_hostile_declarations_stay_screened_behind_a_name(path: Path, name: str) -> None:
    before, after = _HIDING_NAMES[name]
    refusal = lean_screen(before + path.read_text(encoding="utf-8") + after)
    assert refusal is not None and refusal.startswith("forbidden command `"), path.name


PRIME = Problem("p_false", "test", "import Mathlib\n\n", "theorem p_false : Nat.Prime 4 := by")


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_prove_restatement_attacks_are_never_valid(make_backend: Make, attack: str) -> None:
    """Regression (issue 17): the official ``p_false : Nat.Prime 4`` restated where
    ``Nat.Prime`` means ``True``, plus a root ``p_false : True``, was VALID."""
    reply = f"```lean4\n{ATTACKS[attack]}\n```"
    attempt = check_reply(make_backend(max_workers=1), reply, PRIME, timeout_s=10)
    if attempt.verdict is None:  # the official text itself was changed: never checked
        assert attempt.extraction.status.value == "changed"
    else:
        assert attempt.verdict.status is Status.MISSING_DECLARATION, attempt.verdict
    honest = check_reply(make_backend(max_workers=1), f"```lean4\n{HONEST}\n```", PRIME, 10)
    assert honest.verdict is not None and honest.verdict.valid, honest.verdict
