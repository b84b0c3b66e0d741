"""Checking one answer: the static verdicts, and ``gapscope onng check``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import gapscope.lean
from gapscope.app.onng import onng_app
from gapscope.onng.checking import DISALLOWED_TACTIC, STATEMENT_CHANGED, static_check
from gapscope.onng.problemset import load_problem_set
from gapscope.onng.render import obfuscation
from tests.onng.test_task import BrokenLean, FakeLean


def _check(code: str, lam: float = 0.0, name: str = "zero_add") -> tuple[str | None, str]:
    problem_set = load_problem_set()
    problem = next(p for p in problem_set.problems if p.name == name)
    obf = obfuscation(problem_set, lam, 0)
    static = static_check(problem_set, obf, problem, json.dumps({"draft": "", "code": code}))
    return static.status, static.detail


def test_the_reference_proof_passes_the_static_checks() -> None:
    problem_set = load_problem_set()
    problem = next(p for p in problem_set.problems if p.name == "zero_add")
    for lam in (0.0, 1.0):
        obf = obfuscation(problem_set, lam, 0)
        full = obf.apply(problem.declaration())
        body = obf.apply(problem.proof)
        for code in (full, body):
            static = static_check(problem_set, obf, problem, json.dumps({"code": code}))
            assert static.needs_lean, (lam, static.detail)


def test_a_changed_statement_is_its_own_verdict() -> None:
    status, detail = _check("theorem zero_add (n : MyNat) : n + 0 = n := by\n  rfl")
    assert status == STATEMENT_CHANGED and "n + 0 = n" in detail
    # whitespace does not count as a change
    kept = (
        "theorem zero_add  (n : MyNat) :\n    0 + n = n := by\n  induction n with\n  | zero => rfl"
    )
    assert _check(kept)[0] is None


def test_the_official_statement_in_a_comment_does_not_hide_a_changed_one() -> None:
    """Only code states a theorem: the official header written in a comment (or a «name»)
    before a declaration that states something else is not taken as the declaration."""
    changed = "theorem zero_add (n : MyNat) : n + 0 = n := by\n  rfl"
    for cover in (
        "/- theorem zero_add (n : MyNat) : 0 + n = n := -/\n",
        "def «theorem zero_add (n : MyNat) : 0 + n = n :=» := 0\n",
    ):
        status, detail = _check(cover + changed)
        assert status == STATEMENT_CHANGED and "n + 0 = n" in detail, (cover, status)


def test_disallowed_tactics_are_named() -> None:
    assert _check("omega") == (DISALLOWED_TACTIC, "tactics outside the closed theory: omega")
    # `rw` is a tactic of this module at lambda 0 but not by that name at lambda 1
    assert _check("rw [h]", lam=1.0)[0] == DISALLOWED_TACTIC
    assert _check("rw [h]", lam=0.0)[0] is None


def _answer(tmp_path: Path, payload: object) -> str:
    path = tmp_path / "answer.json"
    path.write_text(payload if isinstance(payload, str) else json.dumps(payload), "utf-8")
    return str(path)


def test_check_without_lean_runs_the_static_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GAPSCOPE_LEAN", raising=False)
    args = ["check", "--problem", "zero_add", "--lam", "1", "--json"]
    simp = CliRunner().invoke(onng_app, [*args, _answer(tmp_path, {"Code": "simp"})])
    assert simp.exit_code == 1
    assert json.loads(simp.stdout)["details"]["status"] == "disallowed_tactic"
    nojson = CliRunner().invoke(onng_app, [*args, _answer(tmp_path, "no idea")])
    assert json.loads(nojson.stdout)["details"]["parse_status"] == "no_json"
    ok = CliRunner().invoke(onng_app, [*args, _answer(tmp_path, {"Code": "sorry"})])
    result = json.loads(ok.stdout)["details"]
    assert ok.exit_code == 1 and result["status"] is None and result["lean"] is None
    assert result["detail"].startswith("static checks passed; Lean not run")
    answer = _answer(tmp_path, {"code": "rfl"})
    unknown = CliRunner().invoke(onng_app, ["check", "--problem", "fermat", answer])
    assert unknown.exit_code == 2 and "no problem 'fermat'" in unknown.output


def test_check_with_lean_gives_lean_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeLean()
    monkeypatch.setattr(gapscope.lean, "open_checker", lambda spec, **_: fake)
    args = ["check", "--problem", "tutorial_rfl", "--lean", "fake", "--json"]
    valid = CliRunner().invoke(onng_app, [*args, _answer(tmp_path, {"code": "rfl"})])
    assert valid.exit_code == 0, valid.output
    assert json.loads(valid.stdout)["details"]["lean"] == "valid" and fake.closed
    assert "theorem tutorial_rfl" in fake.requests[0].code
    monkeypatch.setattr(gapscope.lean, "open_checker", lambda spec, **_: BrokenLean())
    broken = CliRunner().invoke(onng_app, [*args, _answer(tmp_path, {"code": "rfl"})])
    assert broken.exit_code == 1
    assert json.loads(broken.stdout)["details"]["status"] == "server_error"


def test_onng_supplies_its_library_to_the_lean_workspace(tmp_path: Path) -> None:
    target = tmp_path / "ws"
    result = CliRunner().invoke(onng_app, ["setup-lean", str(target)])
    assert result.exit_code == 0, result.output
    assert 'name = "GapscopeNNG"' in (target / "lakefile.toml").read_text()
    library = (target / "GapscopeNNG.lean").read_text()
    # the Peano library with its original names (lambda = 0), every problem proved
    assert "inductive MyNat where" in library and "theorem add_succ" in library
    assert "theorem zero_add" in library
    assert "lake build" in result.output
