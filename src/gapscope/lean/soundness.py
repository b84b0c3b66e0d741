"""The soundness rule: when a REPL response makes a proof VALID, and what else it is.

Lean accepts code that uses ``sorry`` (a warning, not an error) and code that relies on any
axiom in scope (``sorryAx``, a user ``axiom``, ``Lean.ofReduceBool`` from ``native_decide``).
Absence of errors therefore proves nothing. The backend appends ``#print axioms <name>`` for
every declaration the code makes and accepts only propext, Classical.choice and Quot.sound.

Names: the named ``theorem``/``lemma``/``def``/``abbrev``/``axiom``/``instance``/``opaque``
declarations that :mod:`gapscope.lean.heads` reads (at their keyword wherever it stands, so
after ``open Foo.in`` on the same line too; outside comments and string literals; explicit
universes ``t.{u}`` are no part of the name), qualified by the open ``namespace``s
(``_root_.`` strips the prefix).
Only reports positioned after the code count, so text the code itself prints (``trace``) cannot
pass for one. A request may name ``required`` declarations (a problem's official theorem):
without them the verdict is MISSING_DECLARATION, never VALID. ``example`` has no name to
print, so each one is rewritten to ``theorem gapscope_example_<k>`` (k = 1, 2, ... in order)
before checking: an example must therefore state a proposition, and columns on its line shift
by the inserted text.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass

from gapscope.lean.heads import qualify, read_heads
from gapscope.lean.protocol import ReplResponse, Sorry
from gapscope.lean.source import Lexed, lex
from gapscope.lean.verdict import STANDARD_AXIOMS, Checker, LeanMessage, LeanVerdict, Status

EXAMPLE_PREFIX = "gapscope_example_"

_QUERIED = frozenset({"theorem", "lemma", "def", "abbrev", "axiom", "instance", "opaque"})
"""Kinds whose named declarations get an axiom query (``example`` is renamed to a theorem)."""
_AXIOMS = re.compile(r"^'(?P<name>.+)' depends on axioms: \[(?P<list>.*)\]\s*$", re.DOTALL)
_NO_AXIOMS = re.compile(r"^'(?P<name>.+)' does not depend on any axioms\s*$", re.DOTALL)
_SORRY_WARNING = re.compile(r"declaration uses ['`]sorry['`]")


@dataclass(frozen=True)
class Prepared:
    """Code as sent to Lean: ``examples`` renamed, axiom queries appended after ``code_lines``.

    ``required``: names the code must declare for a VALID verdict (the official theorem of a
    problem), so that compiling only some helper can never pass for proving the problem.
    """

    code: str
    names: tuple[str, ...]
    code_lines: int
    required: tuple[str, ...] = ()
    unread: str | None = None
    """Where the Lean lexer could not decide how Lean reads the code (None: read to the end).
    Declarations after that place are unknown, so their axioms are never asked: no VALID."""


def declared_names(code: str) -> tuple[str, ...]:
    """The qualified names ``code`` declares, in order (examples excluded)."""
    return tuple(n for n in prepare(code).names if not n.startswith(EXAMPLE_PREFIX))


def prepare(code: str, required: tuple[str, ...] = ()) -> Prepared:
    """Rename examples, find declared names, append one ``#print axioms`` per name.

    The declarations are those :func:`gapscope.lean.heads.read_heads` reads, the reader T2's
    splitter uses too: what one of them takes for a declaration, the other queries."""
    pieces: list[str] = []
    names: list[str] = []
    at = examples = 0
    lexed = lex(code)
    for found in read_heads(lexed):
        if found.kind == "example":
            examples += 1
            name = f"{EXAMPLE_PREFIX}{examples}"
            pieces += [code[at : found.keyword.start], f"theorem {name}"]
            at = found.keyword.end
            names.append(qualify(found.namespace, name))
        elif found.kind in _QUERIED and found.qualified is not None:
            names.append(found.qualified)
    body = "".join(pieces) + code[at:]
    unique = tuple(dict.fromkeys(names))
    suffix = "".join(f"\n#print axioms {name}" for name in unique)
    return Prepared(
        code=body + ("\n" + suffix if suffix else ""),
        names=unique,
        code_lines=body.count("\n") + 1,
        required=required,
        unread=_unread(lexed),
    )


def _unread(lexed: Lexed) -> str | None:
    stop = lexed.undecided
    if stop is None:
        return None
    line = lexed.text.count("\n", 0, stop.position) + 1
    return f"line {line} ({stop.what})"


def parse_axioms(data: str) -> tuple[str, tuple[str, ...]] | None:
    """``#print axioms`` output -> (declaration, axioms); None if ``data`` is something else."""
    match = _AXIOMS.match(data.strip())
    if match:
        axioms = tuple(a.strip() for a in match["list"].replace("\n", " ").split(",") if a.strip())
        return match["name"], axioms
    match = _NO_AXIOMS.match(data.strip())
    return (match["name"], ()) if match else None


def is_sorry_warning(message: LeanMessage) -> bool:
    """Lean's "declaration uses `sorry`" warning (quotes in older versions, backticks now)."""
    return message.severity == "warning" and bool(_SORRY_WARNING.search(message.data))


def _strip_guillemets(name: str) -> str:
    return name.replace("«", "").replace("»", "")


def _after_code(message: LeanMessage, prepared: Prepared) -> bool:
    """Whether ``message`` is positioned on our appended query lines, not in the code: the
    code cannot forge an axiom report (a ``trace`` of the same text sits inside the code)."""
    return message.line is not None and message.line > prepared.code_lines


def _is_query_error(message: LeanMessage, prepared: Prepared) -> bool:
    """An error of one of our ``#print axioms`` lines: after the code, naming a declaration."""
    return (
        message.severity == "error"
        and _after_code(message, prepared)
        and any(_strip_guillemets(n) in _strip_guillemets(message.data) for n in prepared.names)
    )


def judge(response: ReplResponse, prepared: Prepared, elapsed_s: float) -> LeanVerdict:
    """The verdict for one response to ``prepared.code``; VALID only if every rule holds.

    Every settled verdict is marked ``repl-text``: it was read from the REPL's text, with the
    axiom queries run in the model's own environment (docs/lean.md says when that is enough).
    """
    verdict = _judge(response, prepared, elapsed_s)
    if verdict.status is Status.SERVER_ERROR:
        return verdict
    return dataclasses.replace(verdict, checker=Checker.REPL_TEXT)


def _judge(response: ReplResponse, prepared: Prepared, elapsed_s: float) -> LeanVerdict:
    """The rules in the order they settle a verdict: a REPL failure; what Lean itself rejected
    (an error, then sorry); a non-standard axiom; then what leaves validity unknown (code not
    read to the end, a required theorem absent, an axiom report missing). None holds: VALID."""
    if response.error is not None:
        return LeanVerdict(
            Status.SERVER_ERROR, elapsed_s=elapsed_s, detail=f"REPL error: {response.error}"
        )
    read = read_reports(response, prepared)
    settled = (
        lean_rejection(read.messages, response.sorries)
        or non_standard_axioms(read.reported)
        or unestablished(prepared, read)
    )
    if settled is None:
        return LeanVerdict(Status.VALID, read.messages, elapsed_s, read.axioms)
    status, detail = settled
    return LeanVerdict(status, read.messages, elapsed_s, read.axioms or None, detail)


@dataclass(frozen=True)
class Reports:
    """A response's messages sorted: the axiom reports of the code's declarations (by the name
    the code wrote), the errors of our axiom queries, and every other message (the code's)."""

    reported: dict[str, tuple[str, ...]]
    query_errors: tuple[LeanMessage, ...]
    messages: tuple[LeanMessage, ...]

    @property
    def axioms(self) -> tuple[str, ...]:
        """Every axiom reported for any declaration, sorted."""
        return tuple(sorted({a for found in self.reported.values() for a in found}))


def read_reports(response: ReplResponse, prepared: Prepared) -> Reports:
    """Sort the messages: an ``info`` after the code parsing as the axiom report of a declared
    name is that name's report; an error of a query line is a query error; the rest is the
    code's (a report-shaped ``trace`` inside the code stays the code's)."""
    wanted = {_strip_guillemets(n): n for n in prepared.names}
    reported: dict[str, tuple[str, ...]] = {}
    kept: list[LeanMessage] = []
    query_errors: list[LeanMessage] = []
    for message in response.messages:
        reports = message.severity == "info" and _after_code(message, prepared)
        parsed = parse_axioms(message.data) if reports else None
        if parsed and _strip_guillemets(parsed[0]) in wanted:
            reported[wanted[_strip_guillemets(parsed[0])]] = parsed[1]
        elif _is_query_error(message, prepared):
            query_errors.append(message)
        else:
            kept.append(message)
    return Reports(reported, tuple(query_errors), tuple(kept))


Settled = tuple[Status, str]
"""A verdict other than VALID and its reason."""


def lean_rejection(messages: tuple[LeanMessage, ...], sorries: tuple[Sorry, ...]) -> Settled | None:
    """What Lean itself rejected in the code: an error, else a use of ``sorry`` (the REPL's
    sorries, or Lean's warning)."""
    if any(m.severity == "error" for m in messages):
        return Status.LEAN_ERROR, "Lean reported an error"
    if sorries or any(is_sorry_warning(m) for m in messages):
        return Status.SORRY, "the code uses sorry"
    return None


def non_standard_axioms(reported: Mapping[str, tuple[str, ...]]) -> Settled | None:
    """A declaration that depends on an axiom beyond propext, Classical.choice and Quot.sound.

    It settles the verdict whatever else is unknown: decided before any missing report, which
    the model can provoke (a declaration the heads misread).
    """
    bad = {n: sorted(set(a) - STANDARD_AXIOMS) for n, a in reported.items()}
    bad = {n: a for n, a in bad.items() if a}
    if not bad:
        return None
    detail = "; ".join(
        f"'{n}' depends on non-standard axioms: {', '.join(a)}" for n, a in bad.items()
    )
    return Status.SORRY, detail


def unestablished(prepared: Prepared, read: Reports) -> Settled | None:
    """Why validity is unknown, if it is: code not read to the end, a required declaration the
    code does not make, or a declaration whose axioms were not reported (a query Lean answered
    with an error is a counted failure; no reply at all is the server's)."""
    if prepared.unread is not None:
        return (
            Status.SERVER_ERROR,
            f"the code could not be read past {prepared.unread}: the declarations after it,"
            " and so their axioms, are unknown; validity not established",
        )
    declared = {_strip_guillemets(n) for n in prepared.names}
    absent = [r for r in prepared.required if _strip_guillemets(r) not in declared]
    if absent:
        return (
            Status.MISSING_DECLARATION,
            f"the code does not declare {', '.join(absent)}: the theorem asked for was not checked",
        )
    missing = [n for n in prepared.names if n not in read.reported]
    if missing and read.query_errors:
        # Lean answered our query with an error: the code made a name we read as declared
        # unqueryable; a counted failure, never an excuse to leave the attempt out
        return (
            Status.LEAN_ERROR,
            f"axioms of {', '.join(missing)} could not be queried "
            f"({'; '.join(m.data for m in read.query_errors)}); validity not established",
        )
    if missing:
        return (
            Status.SERVER_ERROR,
            f"axioms of {', '.join(missing)} not reported (no reply); validity not established",
        )
    return None
