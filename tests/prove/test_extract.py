"""From a reply to the code that gets checked: the official statement is always the one
checked."""

# ruff: noqa: RUF001  (Lean's double-struck N and R are meant, not look-alike letters)

from __future__ import annotations

from gapscope.prove.extract import (
    ExtractionStatus,
    extract_proof,
    last_lean_block,
    official_names,
)
from gapscope.prove.problems import Problem

STATEMENT = "theorem sq_sum (a b : ℝ) (h₀ : 0 < a ∧ 0 < b) :\n    2 * a * b ≤ a ^ 2 + b ^ 2 := by"
PROBLEM = Problem("sq_sum", "test", "import Mathlib\n\n", STATEMENT)
PROOF = "\n  nlinarith [sq_nonneg (a - b)]"


def _fence(body: str, lang: str = "lean") -> str:
    return f"```{lang}\n{body}\n```"


def test_last_block_wins_and_lean4_counts() -> None:
    reply = f"Draft:\n{_fence('first')}\nBetter:\n{_fence('second', 'lean4')}\nDone."
    assert last_lean_block(reply) == "second\n"
    assert last_lean_block("```python\nx = 1\n```") is None


def test_unclosed_last_block_runs_to_the_end() -> None:
    assert last_lean_block("```lean\ntheorem x := by\n  simp") == "theorem x := by\n  simp"


def test_block_with_restated_theorem_keeps_helpers_and_drops_imports() -> None:
    code = (
        f"import Mathlib\nimport Aesop\n\nlemma helper : (1 : ℝ) = 1 := rfl\n\n{STATEMENT}{PROOF}"
    )
    extraction = extract_proof(f"Here is the proof.\n{_fence(code)}", PROBLEM)
    assert extraction.status is ExtractionStatus.BLOCK
    assert extraction.code == f"\nlemma helper : (1 : ℝ) = 1 := rfl\n\n{STATEMENT}{PROOF}\n"
    assert extraction.file(PROBLEM) == f"import Mathlib\n\n{extraction.code}"


def test_reflowed_statement_is_replaced_by_the_official_text() -> None:
    reflowed = "lemma sq_sum (a b:ℝ) (h₀ : 0 < a ∧ 0 < b) : 2 * a * b ≤ a ^ 2 + b ^ 2 :=by" + PROOF
    extraction = extract_proof(_fence(reflowed, "lean4"), PROBLEM)
    assert extraction.status is ExtractionStatus.BLOCK
    assert extraction.code == f"{STATEMENT}{PROOF}\n"


def test_block_with_a_bare_proof_is_indented_under_the_statement() -> None:
    extraction = extract_proof(_fence("nlinarith [sq_nonneg (a - b)]\n"), PROBLEM)
    assert extraction.status is ExtractionStatus.BLOCK
    assert extraction.code == f"{STATEMENT}\n  nlinarith [sq_nonneg (a - b)]\n"


def test_completion_is_appended_to_the_statement() -> None:
    extraction = extract_proof(PROOF, PROBLEM)
    assert extraction.status is ExtractionStatus.COMPLETION
    assert extraction.code == STATEMENT + PROOF


def test_completion_restating_the_theorem_without_a_fence() -> None:
    extraction = extract_proof(f"{STATEMENT}{PROOF}", PROBLEM)
    assert extraction.status is ExtractionStatus.COMPLETION
    assert extraction.code == f"{STATEMENT}{PROOF}"


def test_changed_statement_is_not_checked() -> None:
    weakened = STATEMENT.replace("≤", "≥")
    for reply in (_fence(weakened + PROOF), _fence("theorem easy : True := trivial")):
        extraction = extract_proof(reply, PROBLEM)
        assert extraction.status is ExtractionStatus.CHANGED
        assert extraction.code is None


def test_empty_replies() -> None:
    for reply in ("", "   \n", _fence("  "), _fence("import Mathlib")):
        extraction = extract_proof(reply, PROBLEM)
        assert extraction.status is ExtractionStatus.EMPTY, reply
        assert extraction.file(PROBLEM) is None


def test_statement_in_a_comment_or_string_is_not_a_restatement() -> None:
    """Regression: the official statement inside ``/- -/`` or a string was grafted there, so
    only ``helper`` was compiled and the reply was judged VALID."""
    helper = "theorem helper : True := trivial"
    for hidden in (
        f"/- {STATEMENT}{PROOF} -/",
        f"-- {STATEMENT}",
        f'def note : String := "{STATEMENT}"',
        f"/-- doc -/\n/- nested /- {STATEMENT} -/ -/",
    ):
        extraction = extract_proof(_fence(f"{helper}\n{hidden}"), PROBLEM)
        assert extraction.status is ExtractionStatus.CHANGED, hidden
        assert extraction.code is None


def test_restatement_after_a_comment_mentioning_it_is_grafted_in_code() -> None:
    code = f"-- we prove {STATEMENT}\n{STATEMENT}{PROOF}"
    extraction = extract_proof(_fence(code), PROBLEM)
    assert extraction.code == f"-- we prove {STATEMENT}\n{STATEMENT}{PROOF}\n"


def test_import_lines_in_comments_stay_and_official_name_is_known() -> None:
    code = f"/-\nimport Foo\n-/\n{STATEMENT}{PROOF}"
    assert extract_proof(_fence(code), PROBLEM).code == f"{code}\n"
    assert official_names(PROBLEM) == ("sq_sum",)
