"""Structure of the problem set: counts, order, names, tactics, syntax balance, determinism."""

from __future__ import annotations

import re

import pytest

from gapscope.onng.lexicon import identifiers
from gapscope.onng.problemset import load_problem_set
from gapscope.onng.render import library_file, obfuscation
from gapscope.onng.tactics import CUSTOM_TACTICS, supported_tactics
from tests.environment import SharedData

PS = load_problem_set()
TACTIC_AT_LINE = re.compile(r"^\s*(?:\|[^=]*=>\s*)?([^\W\d][\w']*)")
TACTIC_AFTER_BY = re.compile(r"\bby\s+([^\W\d][\w']*)")


def tactics_used(proof: str) -> set[str]:
    used = {m.group(1) for line in proof.splitlines() if (m := TACTIC_AT_LINE.match(line))}
    return used | set(TACTIC_AFTER_BY.findall(proof))


def test_counts_and_modules() -> None:
    assert len(PS.modules) == 8
    # the NNG worlds level by level, Fermat's Last Theorem (Power 10) left out: 69 problems
    assert [len(m.problems) for m in PS.modules] == [8, 5, 9, 9, 11, 6, 11, 10]
    assert PS.module_names == (
        "tutorial",
        "addition",
        "multiplication",
        "power",
        "implication",
        "advanced_addition",
        "le",
        "advanced_multiplication",
    )
    assert [p.index for p in PS.problems] == list(range(len(PS.problems)))


def test_names_unique_and_not_reserved() -> None:
    names = PS.declared_names()
    assert len(names) == len(set(names))
    assert len({p.name for p in PS.problems}) == len(PS.problems)


def test_dependencies_appear_earlier() -> None:
    theorem_names = {p.name for p in PS.problems}
    seen = set(PS.given_names())
    for p in PS.problems:
        used = set(identifiers(p.proof)) & theorem_names
        assert used <= seen, f"{p.name} uses later theorems {used - seen}"
        assert p.name not in used
        seen.add(p.name)


@pytest.mark.parametrize("problem", PS.problems, ids=lambda p: p.name)
def test_reference_proof_uses_only_allowed_tactics(problem: object) -> None:
    from gapscope.onng.problemset import Problem

    assert isinstance(problem, Problem)
    allowed = set(PS.allowed_tactics(problem.module))
    used = tactics_used(problem.proof)
    assert used <= allowed, f"{problem.name}: {used - allowed}"


def test_every_tactic_has_a_macro_shape() -> None:
    assert set(PS.tactics) <= supported_tactics()
    assert set(PS.tactics) >= CUSTOM_TACTICS


def test_tactic_words_renamed_only_in_tactic_position() -> None:
    """``intro`` is a tactic and ``Exists.intro``'s case name; ``rfl`` is a term too."""
    obf = obfuscation(PS, 1.0, 0)
    text = obf.apply("  cases h with\n  | intro a ha =>\n    exact Iff.rfl\n  | inr h => rfl")
    assert "| intro a ha =>" in text and "Iff.rfl" in text
    assert f"  {obf.name('cases')} h with" in text
    assert f"| inr h => {obf.name('rfl')}" in text
    assert f"{obf.name('exact')} Iff.rfl" in text


def _balanced(text: str) -> bool:
    pairs = {")": "(", "]": "[", "}": "{", "⟩": "⟨"}
    stack: list[str] = []
    for ch in text:
        if ch in "([{⟨":
            stack.append(ch)
        elif ch in pairs and (not stack or stack.pop() != pairs[ch]):
            return False
    return not stack


def test_brackets_balanced() -> None:
    assert _balanced(PS.library)
    for p in PS.problems:
        assert _balanced(p.declaration()), p.name


def test_peano_facts_are_theorems_not_axioms() -> None:
    assert "axiom " not in PS.library
    for name in ("add_zero", "add_succ", "mul_zero", "mul_succ", "pow_zero", "pow_succ"):
        assert name in PS.given_names()
    assert "attribute [irreducible] add mul pow" in PS.library


def test_rendered_library_deterministic_and_complete() -> None:
    first = library_file(PS, obfuscation(PS, 0.0, 0))
    assert first == library_file(PS, obfuscation(PS, 0.0, 0))
    assert first.rstrip().endswith("end MyNat")
    for p in PS.problems:
        assert p.header() in first
    noisy = library_file(PS, obfuscation(PS, 1.0, 5))
    assert noisy == library_file(PS, obfuscation(PS, 1.0, 5))
    assert "add_comm" not in noisy


NAT = "\u2115"  # the game's notation for its own type
_ASCRIPTION = re.compile(rf"\((\d+) : (?:{NAT}|MyNat)\)")


def _comparable(statement: str) -> str:
    """A statement up to numeral type ascriptions, redundant parentheses and spacing."""
    text = _ASCRIPTION.sub(r"\1", statement.replace(NAT, "MyNat"))
    return " ".join(text.replace("(", " ").replace(")", " ").split())


def test_modules_follow_the_nng_levels_world_by_world(shared_data: SharedData) -> None:
    levels = shared_data("nng/levels.md")
    worlds = re.split(r"\n### ", levels.read_text(encoding="utf-8"))[1:9]
    for world, module in zip(worlds, PS.modules, strict=True):
        statements = [
            row.strip("|").split("|")[3].strip().strip("`")
            for row in world.splitlines()
            if re.match(r"\| *\d+ *\|", row) and "xyzzy" not in row  # Fermat: not closed
        ]
        assert len(statements) == len(module.problems), module.name
        for statement, problem in zip(statements, module.problems, strict=True):
            # a named level keeps its name; an unnamed one (`example`) gets one of ours
            keyword = "example" if statement.startswith("example") else f"theorem {problem.name}"
            ours = problem.header().replace(f"theorem {problem.name}", keyword, 1)
            assert _comparable(ours) == _comparable(statement), (module.name, problem.name)
