"""Deterministic math-answer verifier: a cascade of extraction, normalisation, schema-aware
sympy comparison and math-verify, with slow checks isolated in a killable process pool.

``verify`` and ``equivalent`` use one shared ``Verifier`` created on first use (and closed at
interpreter exit), so casual callers never manage a pool; long runs should own a ``Verifier``.
Unlike the other packages' faces this one loads eagerly: the shared verifier needs
``Verifier`` at import, and every user of the package needs the verifier anyway.
"""

from __future__ import annotations

from gapscope.process_shared import ProcessShared
from gapscope.verify.disk_cache import default_cache_path
from gapscope.verify.extract import Extracted, extract_boxed, find_answer, strip_reasoning
from gapscope.verify.infer import infer_schema
from gapscope.verify.pool import TaskPool
from gapscope.verify.schema import AnswerSchema
from gapscope.verify.verdict import Verdict
from gapscope.verify.verifier import Item, SchemaLike, Verifier, check_timeout

__all__ = [
    "AnswerSchema",
    "Extracted",
    "Item",
    "SchemaLike",
    "TaskPool",
    "Verdict",
    "Verifier",
    "check_timeout",
    "default_cache_path",
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
