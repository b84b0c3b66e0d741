"""Deterministic math-answer verifier: a cascade of extraction, normalisation, schema-aware
sympy comparison and math-verify, with slow checks isolated in a killable process pool.

``verify`` and ``equivalent`` use one shared ``Verifier`` created on first use (and closed at
interpreter exit), so casual callers never manage a pool; long runs should own a ``Verifier``.
"""

from __future__ import annotations

from gapscope.process_shared import ProcessShared
from gapscope.verify.extract import Extracted, extract_boxed, find_answer, strip_reasoning
from gapscope.verify.infer import infer_schema
from gapscope.verify.verdict import Verdict
from gapscope.verify.verifier import SchemaLike, Verifier

__all__ = [
    "Extracted",
    "Verdict",
    "Verifier",
    "equivalent",
    "extract_boxed",
    "find_answer",
    "infer_schema",
    "strip_reasoning",
    "verify",
]

_shared = ProcessShared(Verifier)


def _shared_verifier() -> Verifier:
    return _shared.get()


def verify(response: str, gold: str, schema: SchemaLike = None) -> Verdict:
    """Grade one model response (boxed, stated or trailing answer) with the shared verifier."""
    return _shared_verifier().check(response, gold, schema)


def equivalent(answer: str, gold: str, schema: SchemaLike = None) -> bool:
    """Whether two bare answers are equivalent (used by the family leak check)."""
    return _shared_verifier().compare(answer, gold, schema).accepted
