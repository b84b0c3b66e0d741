"""One attempt from reply to verdict: extract, screen, check with the official name required.

Kept apart from the Inspect task so that the whole path a reply takes - and the guarantee
that no reply is VALID unless Lean compiled the official theorem with standard axioms - can be
exercised directly (tests/prove/test_hostile.py) and reused by any front end.
"""

from __future__ import annotations

from dataclasses import dataclass

from gapscope.lean import CheckRequest, LeanBackend, LeanVerdict, Status, screen_code
from gapscope.prove.extract import Extraction, extract_proof, official_names
from gapscope.prove.problems import Problem


@dataclass(frozen=True)
class Attempt:
    """What was extracted from a reply and, when there was code, its verdict."""

    extraction: Extraction
    verdict: LeanVerdict | None


def check_reply(backend: LeanBackend, reply: str, problem: Problem, timeout_s: float) -> Attempt:
    """Extract the proof from ``reply``, refuse forbidden commands, check the rest with Lean.

    Forbidden code (``gapscope.lean.screen``) never reaches Lean: its verdict is
    ``forbidden_command``. Checked code must declare the problem's official theorem. A backend
    bug costs this attempt (``server_error``), not the run.
    """
    extraction = extract_proof(reply, problem)
    if extraction.code is None:
        return Attempt(extraction, None)
    forbidden = screen_code(extraction.code)
    if forbidden is not None:
        return Attempt(extraction, forbidden.verdict())
    request = CheckRequest(
        extraction.code,
        problem.header,
        timeout_s,
        official_names(problem),
        # The dataset's statement, elaborated by the harness alone: VALID needs the solution's
        # official theorem to have exactly its type (gapscope.lean.replay / .kernel).
        challenge=f"{problem.signature} := sorry",
    )
    try:
        verdict = backend.check_many([request])[0]
    except Exception as err:  # a backend bug must cost one attempt, not the run
        verdict = LeanVerdict(Status.SERVER_ERROR, detail=f"{type(err).__name__}: {err}")
    return Attempt(extraction, verdict)
