"""Declaration heads read through the Lean lexer: a «…» name is one name, never a statement."""

from __future__ import annotations

from gapscope.lean.soundness import declared_names
from gapscope.t2.declarations import head, split_declarations


def test_a_guillemet_name_is_read_from_the_source() -> None:
    assert head("theorem «my thm» (n : Nat) : n = n := rfl") == ("theorem", "«my thm»")
    assert declared_names("theorem «my thm» : True := trivial") == ("«my thm»",)


def test_a_statement_inside_a_name_is_no_declaration_of_it() -> None:
    code = "def «theorem t2 : 1 = 2 :=» : Nat := 1\ntheorem t3 : True := trivial"
    kinds = [(d.kind, d.name) for d in split_declarations(code)]
    assert kinds == [("def", "«theorem t2 : 1 = 2 :=»"), ("theorem", "t3")]
    assert not split_declarations(code)[0].mentions("t2")
