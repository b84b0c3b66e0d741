"""The closed theory: only the module's tactics, under their current names, pass the screen."""

from __future__ import annotations

import pytest

from gapscope.onng.closed import disallowed_tactics, tactic_words
from gapscope.onng.problemset import load_problem_set
from gapscope.onng.render import candidate_declaration, obfuscation

GAME = ("rfl", "rw", "induction", "exact", "apply", "intro", "cases", "use", "left", "right")


@pytest.mark.parametrize("lam", [0.0, 0.5, 1.0])
def test_every_reference_proof_passes_at_every_lambda(lam: float) -> None:
    problem_set = load_problem_set()
    obf = obfuscation(problem_set, lam, seed=3)
    for problem in problem_set.problems:
        allowed = {obf.name(t) for t in problem_set.allowed_tactics(problem.module)}
        declaration = obf.apply(problem.declaration())
        assert disallowed_tactics(declaration, allowed) == [], (problem.name, declaration)
        assert tactic_words(declaration), problem.name  # the screen saw the proof's tactics


@pytest.mark.parametrize("lam", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("tactic", ["simp", "omega", "decide", "simp_all", "exact?", "grind"])
def test_automation_is_rejected_at_every_lambda(lam: float, tactic: str) -> None:
    problem_set = load_problem_set()
    obf = obfuscation(problem_set, lam, seed=0)
    problem = problem_set.problems[-1]
    allowed = {obf.name(t) for t in problem_set.allowed_tactics(problem.module)}
    code = candidate_declaration(problem, obf, f"{obf.name('intro')} h\n{tactic}")
    assert disallowed_tactics(code, allowed) == [tactic]


def test_real_names_of_renamed_tactics_are_rejected() -> None:
    problem_set = load_problem_set()
    obf = obfuscation(problem_set, 1.0, seed=0)
    renamed = [t for t in GAME if obf.name(t) != t]
    assert renamed  # at lambda 1 the tactics have alien names
    allowed = {obf.name(t) for t in GAME}
    code = "theorem t (a : N) : a = a := by\n" + "".join(f"  {t} h\n" for t in renamed)
    assert disallowed_tactics(code, allowed) == renamed
    same = "theorem t (a : N) : a = a := by\n" + "".join(f"  {obf.name(t)} h\n" for t in GAME)
    assert disallowed_tactics(same, allowed) == []


@pytest.mark.parametrize(
    ("code", "found"),
    [
        ("theorem t : P := by simp", ["simp"]),
        ("theorem t : P := by\n  rw [h] <;> omega", ["rw", "omega"]),
        ("theorem t : P := by\n  rw [h]; decide", ["rw", "decide"]),
        (
            "theorem t : P := by\n  cases h with\n  | inl a => simp\n  | inr b =>\n    omega",
            ["cases", "simp", "omega"],
        ),
        (
            "theorem t : P := by\n  induction n with\n    | zero => tauto\n"
            "    | succ n ih => exact ih",
            ["induction", "tauto", "exact"],
        ),
        (
            "theorem t : P := by\n  constructor\n  · simp\n    ring\n  · exact h",
            ["constructor", "simp", "ring", "exact"],
        ),
        ("theorem t : P :=\n  foo (by decide) bar", ["decide"]),
        ("theorem t : P := by\n  exact foo\n    rfl\n  rfl", ["exact", "rfl"]),
        ("theorem t : P := by\n  -- simp would do it\n  /- omega\n  too -/\n  rfl", ["rfl"]),
        ("theorem t : P :=\n  fun h => h.symm", []),
        # comment marks inside a string literal or a «…» name comment nothing out
        ('theorem t : P := by\n  have s : String := "--"; simp', ["have", "simp"]),
        ('theorem t : P := by\n  have s : String := "/-"\n  decide\n  -- -/', ["have", "decide"]),
        ("theorem t : P := by\n  exact «omega»\n  rfl", ["exact", "rfl"]),
        (
            "theorem helper : Q := by\n  omega\n\ntheorem t : P := by\n  exact helper",
            ["omega", "exact"],
        ),
    ],
)
def test_tactics_are_found_in_every_position(code: str, found: list[str]) -> None:
    assert [w for w in tactic_words(code) if w not in {"h", "foo"}] == found
    assert disallowed_tactics(code, {"exact", "rfl", "rw", "cases", "induction"}) == [
        w for w in dict.fromkeys(found) if w not in {"exact", "rfl", "rw", "cases", "induction"}
    ]
