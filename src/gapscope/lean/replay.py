"""The REPL's acceptance check for an official theorem, run outside the model's environment.

Absence of errors proves nothing about *which* statement was proved: inside ``namespace Evil``
with ``def Nat.Prime (_ : ℕ) : Prop := True`` the official text ``theorem p_false : Nat.Prime
4`` means something else, and a root ``theorem p_false : True`` (or the statement hidden in a
``«...»`` name) supplies the name. Nor may a harness query run in the model's environment: its
macros and elaborators could rewrite ``#print axioms``. So with the REPL alone:

1. the model's code is elaborated on the header, as it is, for its messages and sorries;
2. that environment is pickled (``pickleTo``) and unpickled (``unpickleEnvFrom``): the REPL
   imports the header afresh and re-adds the solution's constants with ``replayToElabEnv``
   (repl 8948401, ``REPL/Lean/Replay.lean``), which *bypasses kernel type-checking* ("pickles
   are trusted artifacts; this is not a verifier boundary") and drops ``unsafe`` and
   ``partial`` constants. No macro, syntax, elaborator, instance or attribute of the model's
   survives, but its open namespaces and **options** do (``CommandSnapshot`` pickles the
   command state), so the queries below set ``pp.all`` themselves and name ``_root_``;
3. there, for each official name, ``#check @_root_.NAME`` under ``pp.all`` (fully explicit,
   full names, universes) and ``#print axioms _root_.NAME``;
4. the same ``#check`` runs on the challenge - the dataset's statement, elaborated by the
   harness alone on the header - and the two signatures must be identical text.

VALID needs all of it; the verdict is marked ``repl-text`` because the comparison is of
printed terms, not of kernel terms, and nothing here is a kernel check of the solution
(docs/lean.md gives the argument and its limits: a changed constructor type passes). The
kernel judge (``gapscope.lean.kernel``: comparator) then has the last word when configured.
"""

# ruff: noqa: RUF002  (Lean's double-struck N is meant)

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gapscope.lean.protocol import ReplResponse
from gapscope.lean.soundness import is_sorry_warning, parse_axioms
from gapscope.lean.verdict import (
    REPLAY_CHECK,
    STANDARD_AXIOMS,
    Checker,
    LeanMessage,
    LeanVerdict,
    Status,
)

_UNKNOWN = re.compile(r"unknown (?:identifier|constant)", re.IGNORECASE)


def signature_query(name: str) -> str:
    """One line printing ``name``'s signature fully explicitly, resolved from the root."""
    return f"set_option pp.all true in #check @_root_.{name}"


def axioms_query(name: str) -> str:
    return f"#print axioms _root_.{name}"


def challenge_command(challenge: str, names: Sequence[str]) -> tuple[str, int]:
    """(the challenge followed by one signature query per name, the first query's line)."""
    body = challenge.rstrip("\n")
    first = body.count("\n") + 2
    return body + "\n" + "\n".join(signature_query(n) for n in names), first


def solution_command(names: Sequence[str]) -> str:
    """The queries run in the replayed environment: signatures, then axioms, one per line."""
    return "\n".join([signature_query(n) for n in names] + [axioms_query(n) for n in names])


def _at_line(messages: Sequence[LeanMessage], line: int) -> list[LeanMessage]:
    return [m for m in messages if m.line == line]


@dataclass(frozen=True)
class Signature:
    """What the signature query printed for one name: its text, or the error instead."""

    text: str | None
    error: str = ""


def read_signatures(
    response: ReplResponse, names: Sequence[str], first_line: int
) -> dict[str, Signature]:
    """The signature each name's query printed (query k on line ``first_line + k``)."""
    out: dict[str, Signature] = {}
    for k, name in enumerate(names):
        here = _at_line(response.messages, first_line + k)
        errors = [m.data for m in here if m.severity == "error"]
        infos = [m.data for m in here if m.severity == "info"]
        if errors or len(infos) != 1:
            out[name] = Signature(None, "; ".join(errors) or f"{len(infos)} replies")
        else:
            out[name] = Signature(infos[0].strip())
    return out


def read_axioms(
    response: ReplResponse, names: Sequence[str], first_line: int
) -> dict[str, tuple[str, ...]]:
    """The axioms reported for each name whose ``#print axioms`` answered as expected."""
    out: dict[str, tuple[str, ...]] = {}
    for k, name in enumerate(names):
        for message in _at_line(response.messages, first_line + k):
            parsed = parse_axioms(message.data) if message.severity == "info" else None
            if parsed is not None:
                out[name] = parsed[1]
    return out


def elaboration_verdict(response: ReplResponse, elapsed_s: float) -> LeanVerdict | None:
    """The verdict the model's own elaboration already settles (an error, a sorry), or None
    when the code elaborated cleanly and the acceptance check must run."""
    messages = response.messages
    if response.error is not None:
        return LeanVerdict(
            Status.SERVER_ERROR, elapsed_s=elapsed_s, detail=f"REPL error: {response.error}"
        )
    if any(m.severity == "error" for m in messages):
        return LeanVerdict(
            Status.LEAN_ERROR, messages, elapsed_s, detail="Lean reported an error",
            checker=Checker.REPL_TEXT,
        )  # fmt: skip
    if response.sorries or any(is_sorry_warning(m) for m in messages):
        return LeanVerdict(
            Status.SORRY, messages, elapsed_s, detail="the code uses sorry",
            checker=Checker.REPL_TEXT,
        )  # fmt: skip
    return None


def unpickle_failure(
    error: str, messages: tuple[LeanMessage, ...], elapsed_s: float
) -> LeanVerdict:
    """The verdict when the REPL could not rebuild the solution's environment. The pinned
    REPL's unpickle runs no kernel check, so its failure proves nothing either way; it comes
    after the REPL accepted the code, and the code can cause it (the replay drops ``partial``
    constants), so it is labelled :data:`REPLAY_CHECK` for the reports to count as a failure."""
    return LeanVerdict(
        Status.SERVER_ERROR,
        messages,
        elapsed_s,
        detail=f"the REPL could not restore the solution's environment: {error}",
        checks=(Checker.REPL_TEXT.value, REPLAY_CHECK),
    )


def acceptance_verdict(
    messages: tuple[LeanMessage, ...],
    challenge: Mapping[str, Signature],
    replayed: ReplResponse,
    names: Sequence[str],
    elapsed_s: float,
) -> LeanVerdict:
    """VALID only if every official name, in the replayed solution, has the challenge's
    signature and only standard axioms; ``messages`` are the elaboration's, kept for the
    record."""

    def verdict(status: Status, detail: str, axioms: tuple[str, ...] | None = None) -> LeanVerdict:
        return LeanVerdict(status, messages, elapsed_s, axioms, detail, checker=Checker.REPL_TEXT)

    if replayed.error is not None:
        return unpickle_failure(replayed.error, messages, elapsed_s)
    solution = read_signatures(replayed, names, 1)
    reported = read_axioms(replayed, names, len(names) + 1)
    for name in names:
        wanted, got = challenge[name], solution[name]
        if wanted.text is None:
            return LeanVerdict(
                Status.SERVER_ERROR,
                messages,
                elapsed_s,
                detail=f"the challenge statement of {name} does not elaborate: {wanted.error}",
            )
        if got.text is None:
            why = "" if _UNKNOWN.search(got.error) else f" ({got.error})"
            return verdict(
                Status.MISSING_DECLARATION,
                f"the solution has no root-namespace {name}{why}: the theorem asked for was "
                "not proved",
            )
        if got.text != wanted.text:
            return verdict(
                Status.MISSING_DECLARATION,
                f"the solution's {name} states `{got.text}` where the challenge states "
                f"`{wanted.text}`: not the theorem asked for",
            )
    axioms = tuple(sorted({a for found in reported.values() for a in found}))
    bad = {n: sorted(set(a) - STANDARD_AXIOMS) for n, a in reported.items()}
    bad = {n: a for n, a in bad.items() if a}
    if bad:  # settled whatever else is unknown
        detail = "; ".join(
            f"'{n}' depends on non-standard axioms: {', '.join(a)}" for n, a in bad.items()
        )
        return verdict(Status.SORRY, detail, axioms)
    missing = [n for n in names if n not in reported]
    if missing:  # its signature printed, so the constant exists: the REPL failed, not the code
        return LeanVerdict(
            Status.SERVER_ERROR,
            messages,
            elapsed_s,
            axioms or None,
            f"axioms of {', '.join(missing)} not reported; validity not established",
        )
    return verdict(Status.VALID, "", axioms)
