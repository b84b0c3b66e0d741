"""Coherence classes from extraction status and Lean verdicts (messages shaped like Lean 4's)."""

# ruff: noqa: RUF001  (Lean's double-struck N and R are meant, not look-alike letters)

from __future__ import annotations

import pytest

from gapscope.lean.verdict import CONTROL_CHECK, LeanMessage, LeanVerdict, Status
from gapscope.prove.coherence import Coherence, classify, is_malformed_message
from gapscope.prove.extract import ExtractionStatus

BLOCK = ExtractionStatus.BLOCK


def _error(*texts: str, status: Status = Status.LEAN_ERROR) -> LeanVerdict:
    return LeanVerdict(status, tuple(LeanMessage("error", t, 3, 2) for t in texts))


@pytest.mark.parametrize(
    "text",
    [
        "unexpected token 'at'; expected ':=', 'where' or '|'",
        "unexpected identifier; expected command",
        "unexpected end of input; expected '{'",
        "expected term",
        "unknown identifier 'Real.sqrt_lt_sqrt_iff''",
        "Unknown identifier `nat_sub_le_foo`",
        "unknown constant 'Nat.prime_def_lt'''",
        "unknown tactic",
        "unknown namespace 'Finset.Nat'",
        "invalid field 'mul_pos'', the environment does not contain 'Real.mul_pos''",
        "unterminated comment",
        "type expected, got\n  (f : ℕ → ℕ)",
    ],
)
def test_parse_and_elaboration_errors(text: str) -> None:
    assert is_malformed_message(text)
    assert classify(BLOCK, _error(text)) is Coherence.MALFORMED


@pytest.mark.parametrize(
    "text",
    [
        "unsolved goals\nx y : ℝ\nh₀ : x + y = 10\n⊢ x * y ≤ 25",
        "linarith failed to find a contradiction\ncase a\nx : ℝ\na✝ : x < 0\n⊢ False",
        "omega could not prove the goal:\na possible counterexample may satisfy the constraints",
        "The rfl tactic failed. Possible reasons:",
        "tactic 'decide' failed for proposition\n  2 ^ 100 % 7 = 2",
        "type mismatch\n  h₁\nhas type\n  x < 3 : Prop\nbut is expected to have type\n  x ≤ 3",
        "simp made no progress",
        "nlinarith failed to find a contradiction",
    ],
)
def test_proof_failures_are_well_formed(text: str) -> None:
    assert not is_malformed_message(text)
    assert classify(BLOCK, _error(text)) is Coherence.UNPROVEN


def test_one_parse_error_makes_the_attempt_malformed() -> None:
    verdict = _error("unsolved goals\n⊢ 1 < 2", "unknown identifier 'foo_bar'")
    assert classify(ExtractionStatus.COMPLETION, verdict) is Coherence.MALFORMED


def test_only_error_severity_counts() -> None:
    verdict = LeanVerdict(
        Status.LEAN_ERROR,
        (
            LeanMessage("warning", "unexpected token in the docstring? (a linter note)"),
            LeanMessage("error", "unsolved goals\n⊢ False"),
        ),
    )
    assert classify(BLOCK, verdict) is Coherence.UNPROVEN


@pytest.mark.parametrize(
    ("verdict", "expected"),
    [
        (LeanVerdict(Status.VALID, axioms=("propext",)), Coherence.PROVEN),
        (
            LeanVerdict(Status.SORRY, (LeanMessage("warning", "declaration uses 'sorry'"),)),
            Coherence.UNPROVEN,
        ),
        (LeanVerdict(Status.TIMEOUT, detail="killed after 60 s"), Coherence.UNPROVEN),
        (LeanVerdict(Status.SERVER_ERROR, detail="REPL crashed"), Coherence.SERVER_ERROR),
        # the backend answered a control right after: the attempt crashed it, a failure in n
        (
            LeanVerdict(Status.SERVER_ERROR, detail="REPL crashed", checks=(CONTROL_CHECK,)),
            Coherence.UNSETTLED,
        ),
        (LeanVerdict(Status.LEAN_ERROR), Coherence.UNPROVEN),
    ],
)
def test_statuses(verdict: LeanVerdict, expected: Coherence) -> None:
    assert classify(BLOCK, verdict) is expected


def test_unchecked_attempts() -> None:
    assert classify(ExtractionStatus.EMPTY, None) is Coherence.EMPTY
    assert classify(ExtractionStatus.CHANGED, None) is Coherence.CHANGED
    with pytest.raises(ValueError, match="must have a verdict"):
        classify(BLOCK, None)
