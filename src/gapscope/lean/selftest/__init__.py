"""The known-answer self-test: a Lean judge decides verdicts only after it passed here.

``gapscope lean selftest`` runs the shipped cases (``cases.json``: honest proofs, ``sorry``,
user axioms, ``native_decide``, restatements, a changed constructor, a tampered challenge, ...)
through the real backend and each configured checker and stores the result in the workspace,
keyed by toolchain, REPL and checker revision and the source hash (``record``). ``open_backend``
refuses a local backend whose key has no passing record (``SelfTestRequired``).
"""

from gapscope.lean.selftest.cases import Case, load_cases, source_hash
from gapscope.lean.selftest.record import (
    ENV_ALLOW_UNTESTED,
    InstallationKey,
    SelfTestRequired,
    passed,
    refusal,
    untested_allowed,
)

__all__ = [
    "ENV_ALLOW_UNTESTED",
    "Case",
    "InstallationKey",
    "SelfTestRequired",
    "load_cases",
    "passed",
    "refusal",
    "source_hash",
    "untested_allowed",
]
