"""The command screen: what model-written Lean may contain, and the verdict when it may not."""

# ruff: noqa: RUF001  (Lean's double-struck N and R are meant, not look-alike letters)

from __future__ import annotations

import pytest

from gapscope.lean.screen import FORBIDDEN_KEYWORDS, Forbidden, screen_code
from gapscope.lean.verdict import Status

ALLOWED = [
    "theorem t (n : ℕ) : n + 0 = n := by simp",
    "lemma helper : (1 : ℝ) = 1 := rfl\n\ntheorem t : True := trivial",
    "open Real in\ntheorem t : True := trivial",
    "open scoped BigOperators\nopen Nat hiding add_comm",
    "namespace Foo\nsection\nprivate def f : ℕ := 1\nend\nend Foo",
    "noncomputable section\nnoncomputable def g : ℝ := 1\nend",
    "set_option maxHeartbeats 400000 in\ntheorem t : True := by\n"
    "  set_option maxRecDepth 2000 in trivial",
    "set_option synthInstance.maxHeartbeats 40000",
    "@[simp] lemma a : 1 = 1 := rfl\n@[local simp, reducible] def b := 1",
    "structure P where\n  x : ℕ\nderiving Repr",
    "inductive T | a | b\nclass C (α : Type) where\n  op : α",
    "axiom cheat : False",
    "theorem t : True := by\n  sorry",
    "mutual\ndef even : ℕ → Bool\n  | 0 => true\n  | n+1 => odd n\n"
    "def odd : ℕ → Bool\n  | 0 => false\n  | n+1 => even n\nend",
    '-- #eval IO.Process.run\n/- macro_rules | `(x) => `(y) -/\ndef s : String := "#exit"',
    "theorem t (h' : x.prefix = 1) (α : Type) : True := trivial",
    "example : #[1, 2].size = 2 := rfl",
    "theorem «weird name» : True := trivial",
    "theorem «theorem p_false : Nat.Prime 4 :=» : True := trivial",
    "theorem t : True := by\n  exact (fun (h₂ : True) => h₂.elim') trivial",
    "example : f ⁻¹' s = s := rfl",
]


@pytest.mark.parametrize("code", ALLOWED)
def test_what_a_proof_needs_passes(code: str) -> None:
    assert screen_code(code) is None


@pytest.mark.parametrize(
    ("code", "command"),
    [
        ('#eval IO.Process.run { cmd := "curl", args := #["evil"] }', "#eval"),
        ("theorem t : True := trivial #exit", "#exit"),
        ("#print axioms t", "#print"),
        ("#check Nat", "#check"),
        ("set_option debug.skipKernelTC true", "set_option debug.skipKernelTC true"),
        ("theorem t : False := by\n  set_option debug.skipKernelTC true in sorry", "set_option"),
        ("set_option maxHeartbeats true", "set_option maxHeartbeats true"),
        ("set_option autoImplicit true", "set_option autoImplicit true"),
        ("variable (h : False)\ninclude h\ntheorem t : False := h", "variable"),
        ("include h", "include"),
        ("macro_rules | `(tactic| trivial) => `(tactic| sorry)", "macro_rules"),
        ('macro "triv" : tactic => `(tactic| sorry)', "macro"),
        ('local notation "ℝ" => ℕ', "notation"),
        ('infixl:65 " + " => HMul.hMul', "infixl"),
        ('syntax (name := s) "s" : tactic', "syntax"),
        ('elab "e" : tactic => pure ()', "elab"),
        ('run_cmd Lean.logInfo "hi"', "run_cmd"),
        ("theorem t : True := by\n  run_tac pure ()", "run_tac"),
        ("def x : Nat := by_elab pure (Lean.mkNatLit 1)", "by_elab"),
        ('initialize IO.println "x"', "initialize"),
        ("instance : LE ℝ := ⟨fun _ _ => True⟩", "instance"),
        ("@[implemented_by evil] def f : Nat := 1", "@[implemented_by]"),
        ("@[simp, instance] def f : Inhabited Nat := ⟨1⟩", "@[instance]"),
        ("@[simp\n#eval IO.Process.run x", "#eval"),  # an unclosed @[ hides nothing
        ("attribute [local instance] Classical.propDecidable", "attribute"),
        ("unsafe def f : Nat := 1", "unsafe"),
        ("export Nat (succ)", "export"),
        ("universe u", "universe"),
        ("import Mathlib.Tactic", "import"),
        ('def s := s!"{1}"', 's!"..."'),
        ('def m := throwError "no"', "throwError"),
        ("end MyNat\ntheorem escape : True := trivial", "end"),
        ("theorem t : True := by\n  trivial\n/- the rest is hidden", "/- the rest is hidden"),
        # what a `«…»` name, a string or a comment mark used to hide (issue 17)
        ('def «--» : Nat := 1 #eval IO.Process.run { cmd := "id" }', "«--»"),
        ('def «"» : Nat := 1 #exit\ndef «"» : Nat := 2', '«"»'),
        ("def «/-» : Nat := 1 macro_rules | `(1) => `(2)\ndef «-/» : Nat := 2", "«/-»"),
        ("theorem «weird #eval name» : True := trivial", "#eval"),
        ("theorem t : True := by\n  «x run_cmd pure ()»\n  trivial", "run_cmd"),
        ("theorem t : True := by\n  h'\"' #eval IO.Process.exit 0 -- \"", "h'"),
        ('def s : String := "\\q #eval IO.Process.exit 0 -- "', "\\q"),
        ("/-/- -/ #eval IO.Process.exit 0\n-- -/", "#eval"),
        ("theorem t : True := trivial <-- #eval IO.Process.exit 0", "-- #eval"),
        ('def m := trace[x] "{" -- " #eval IO.Process.exit 0 }"', '"{"'),
    ],
)
def test_forbidden_commands_are_named(code: str, command: str) -> None:
    found = screen_code(code)
    assert isinstance(found, Forbidden)
    assert found.command.startswith(command)
    verdict = found.verdict()
    assert verdict.status is Status.FORBIDDEN and not verdict.valid
    assert f"`{found.command}`" in verdict.detail and f"line {found.line}" in verdict.detail


def test_every_forbidden_keyword_is_caught_wherever_it_stands() -> None:
    for keyword in FORBIDDEN_KEYWORDS:
        found = screen_code(f"theorem t : True := by\n  trivial\n  {keyword} x")
        assert found is not None and found.command == keyword and found.line == 3, keyword


def test_first_forbidden_command_is_reported_with_its_line() -> None:
    found = screen_code("theorem t : True := trivial\n\n#eval 1\nmacro x")
    assert found == Forbidden("#eval", 3, "`#` commands evaluate or print at check time")


def test_unclosed_attribute_runs_hide_nothing() -> None:
    # a run of unclosed `@[` is read once (linear: benchmarks/bench_screen.py has the speed)
    # and neither hides a later command nor lets a forbidden attribute through
    run = "@[simp " * 2000
    assert screen_code(run) is None  # Lean rejects the parse; nothing runs
    assert screen_code(run + "\n#eval IO.Process.exit 0") == Forbidden(
        "#eval", 2, "`#` commands evaluate or print at check time"
    )
    found = screen_code(run + "@[implemented_by evil] def f : Nat := 1")
    assert found is not None and found.command == "@[implemented_by]"
    found = screen_code("@[simp, implemented_by evil\ndef f : Nat := 1")
    assert found is not None and found.command == "@[implemented_by]"
