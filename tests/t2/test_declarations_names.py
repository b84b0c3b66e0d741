"""Declaration heads read through the Lean lexer: a «…» name is one name, never a statement."""

from __future__ import annotations

import pytest

from gapscope.lean.soundness import declared_names
from gapscope.t2.declarations import head, is_hard, split_declarations


def test_a_guillemet_name_is_read_from_the_source() -> None:
    assert head("theorem «my thm» (n : Nat) : n = n := rfl") == ("theorem", "«my thm»")
    assert declared_names("theorem «my thm» : True := trivial") == ("«my thm»",)


def test_a_statement_inside_a_name_is_no_declaration_of_it() -> None:
    code = "def «theorem t2 : 1 = 2 :=» : Nat := 1\ntheorem t3 : True := trivial"
    kinds = [(d.kind, d.name) for d in split_declarations(code)]
    assert kinds == [("def", "«theorem t2 : 1 = 2 :=»"), ("theorem", "t3")]
    assert not split_declarations(code)[0].uses(("t2",))


@pytest.mark.parametrize(
    ("code", "hard"),
    [
        ("theorem a : 1 = 1 := rfl", True),
        ("lemma b : True := trivial", True),
        ("@[simp] private theorem c : True := trivial", True),
        ("def IsGood (n : Nat) : Prop := n > 0", False),  # states, proves nothing
        ("@[simp] noncomputable abbrev P {a : Type} (x : a) : Prop :=\n  True", False),
        ("def p : Nat → Prop := fun _ => True", False),  # a predicate: a function type
        ("def q (h : Prop) : Nat := 1", False),  # Prop only in a binder
        ("def t := (1 : Nat)", False),
        ("instance : Inhabited Nat := ⟨0⟩", False),
        ("structure S : Prop where", False),
    ],
)
def test_hard_targets_are_theorems(code: str, hard: bool) -> None:
    assert is_hard(code) is hard
