"""Successors are the target's dependents: declarations that use it, directly or through
another dependent, decided on identifier tokens of the code (comments and strings blanked)."""

from __future__ import annotations

from gapscope.lean.verdict import LeanMessage
from gapscope.t2.programs import attribute, build_programs
from gapscope.t2.records import T2Record
from gapscope.t2.successors import record_successors

TARGET = "theorem foo : 1 + 1 = 2 := rfl"
AFTER = """
theorem foo_bar : 1 = 1 := rfl
theorem a1 : 1 + 1 = 2 := foo
-- foo is mentioned in this comment only
theorem c1 : True := trivial
def s1 : String := "foo"
/-- about foo -/
theorem t1 : 2 = 2 := by
  have := a1
  rfl
theorem z : foo_bar = foo_bar := rfl
theorem d2 : 2 = 1 + 1 := foo.symm
theorem n1 : 1 + 1 = 2 := Nat.foo"""


def _record(after: str = AFTER) -> T2Record:
    return T2Record(
        id="made.foo",
        target_code=TARGET,
        formal_language="import Mathlib\n" + TARGET + after,
        natural_language="",
        target_code_name="theorem foo",
        before_target_code="",
        after_target_code=after,
        header="import Mathlib",
        dataset_name="made",
        line=1,
    )


def test_only_declarations_that_use_the_target_are_successors() -> None:
    found = record_successors(_record())
    # foo_bar (a longer name), c1 (a comment), s1 (a string), z (uses foo_bar) are not.
    assert [(s.name, s.direct) for s in found] == [
        ("a1", True),
        ("t1", False),  # through a1
        ("d2", True),  # foo.symm
        ("n1", True),  # Nat.foo
    ]
    assert [(s.start_line, s.end_line) for s in found] == [(2, 3), (6, 10), (11, 12), (12, 13)]


def test_an_error_in_a_declaration_that_does_not_use_the_target_fails_no_successor() -> None:
    programs = build_programs(_record(), TARGET, timeout_s=10)
    # Body: line 1 the target, a blank line, then AFTER from line 3 (foo_bar) on.
    errors = (LeanMessage("error", "boom", line=3), LeanMessage("error", "boom", line=4))
    where = attribute(errors, programs)
    assert (where.successors, where.unrelated, where.unplaced) == ((1, 0, 0, 0), 1, 0)
