"""What runs inside a pool worker: the symbolic stage, then math-verify as the last resort.

Everything here may be slow or blow up (sympy on ``9^{9^{9^9}}``, antlr on 10,000 nested
brackets), which is why it only ever runs in a worker process the parent can kill. Timeouts are
the parent's wall clock, never ``signal.alarm``: math-verify's own timeouts are switched off
(``parsing_timeout=None``, ``timeout_seconds=None``), which also makes it thread-safe here.
"""

from __future__ import annotations

import logging
import re
import signal
from multiprocessing.connection import Connection
from typing import Any

from gapscope.verify.normalize import canonical
from gapscope.verify.schema import AnswerSchema
from gapscope.verify.verdict import (
    INTERNAL_ERROR,
    MATH_VERIFY_MATCH,
    MISMATCH,
    NUMERIC_MATCH,
    PARSE_ERROR,
    SYMBOLIC_MATCH,
    TIMEOUT,
)

Result = tuple[str, str, str]
_STRICT = re.compile(r"(?<!\\)[<>]|\\[lg]t(?![a-z])")
# Sums written with an ellipsis have no value sympy can check (``1+2+\\cdots+n`` would lose its
# dots): only the fast path's string match may accept them.
_ELLIPSIS = re.compile(r"\\(?:c|l)?dots(?![a-zA-Z])|…")
# Shapes math-verify is known to accept wrongly: ratios/times read as division (``12:00`` vs
# ``1:00``), ``cases`` systems or piecewise functions (compared by their first line), and
# equations (compared by a fragment: ``f(3)=a f(1)+b f(2)`` "equals" ``f(3)=a f(1)+b f(3)``,
# ``\\log_5 12=\\frac{\\lg 12}{\\lg 5}`` equals ``\\log_6 12=...``). Equations are the symbolic
# stage's to decide.
_NO_FALLBACK = re.compile(r"\\begin\{cases\}|(?<!\\):|=")
_UNBOUNDED = re.compile(r"\\(?:int|iint|oint|sum|prod|lim)(?![a-zA-Z])")
_RELATIONS = (AnswerSchema.INEQUALITY, AnswerSchema.EQUATION)
# Commands that are not variables (Greek letters are): what is left of a numeric statement.
_COMMAND = re.compile(
    r"\\(?:[dt]?frac|sqrt|left|right|cdot|times|div|pi|le|ge|leq|geq|lt|gt|ne|neq|lfloor|"
    r"rfloor|lceil|rceil|sin|cos|tan|cot|sec|csc|log|ln|exp|circ|pm|mp|infty|approx)(?![a-zA-Z])"
)
_LETTER = re.compile(r"[A-Za-z]")
_LOOSE = re.compile(r"\\(?:le|ge|leq|geq|leqslant|geqslant)(?![a-z])|[≤≥]")


def init_worker(memory_mb: int | None) -> None:
    """Import the heavy libraries once per process and cap its address space."""
    if memory_mb is not None:
        try:
            import resource

            limit = memory_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        except (ImportError, ValueError, OSError):
            pass
    logging.getLogger("math_verify").setLevel(logging.CRITICAL)
    logging.getLogger("latex2sympy2_extended").setLevel(logging.CRITICAL)
    import math_verify  # noqa: F401

    from gapscope.verify import schema_compare

    schema_compare.compare("1", "\\frac{2}{2}", AnswerSchema.NUMBER, 1e-6)


def serve(conn: Connection, memory_mb: int | None) -> None:
    """A worker's main loop: warm up, say so, then run ``(fn, args)`` tasks until ``None``.

    Each answer is ``(True, result)``; a task that raises answers ``(False, None)`` (the
    parent counts it as lost); one that hangs or crashes the process is the parent's to kill.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    init_worker(memory_mb)
    try:
        conn.send("ready")
        while (message := conn.recv()) is not None:
            fn, args = message
            try:
                answer: tuple[bool, Any] = (True, fn(*args))
            except Exception:
                answer = (False, None)
            conn.send(answer)
    except (EOFError, OSError):
        return  # the parent is gone (it exited or dropped this worker): nothing to report


def _strictness(text: str) -> tuple[int, int]:
    return len(_STRICT.findall(text)), len(_LOOSE.findall(text))


def math_verify_accepts(answer: str, gold: str, schema: AnswerSchema) -> bool | None:
    """math-verify's verdict, None when it cannot parse either side.

    For inequalities an accept must keep the strictness of every relation: math-verify is known
    to equate relations that differ there.
    """
    from math_verify import parse, verify

    parsed_gold = parse("\\boxed{" + gold + "}", parsing_timeout=None)  # type: ignore[arg-type]
    parsed_answer = parse("\\boxed{" + answer + "}", parsing_timeout=None)  # type: ignore[arg-type]
    if not parsed_gold or not parsed_answer:
        return None
    ok = bool(verify(parsed_gold, parsed_answer, timeout_seconds=None))
    if ok and schema is AnswerSchema.INEQUALITY:
        return _strictness(answer) == _strictness(gold)
    return ok


def same_tree(answer: str, gold: str, schema: AnswerSchema) -> bool:
    """Whether two answers parse to the same unevaluated expression.

    Nothing is evaluated (no sum is summed), but each node is rebuilt, so sympy puts the terms
    of every sum and the factors of every product in its canonical order (the parser keeps them
    as written): ``\\sum_k F_k F_{n-k}`` and ``\\sum_k F_{n-k} F_k`` are one tree while a changed
    bound or summand is another. An unparsable side is no match.
    """
    from gapscope.verify.sympy_eq import ParseFailure, parse  # sympy: only inside a worker

    def rebuilt(expr: Any) -> Any:
        return expr.func(*[rebuilt(arg) for arg in expr.args]) if expr.args else expr

    try:
        trees = [rebuilt(parse(canonical(text, schema)[0])) for text in (answer, gold)]
    except ParseFailure:
        return False
    return bool(trees[0] == trees[1])


def deep_check(answer: str, gold: str, schema: str, rel_tol: float) -> Result:
    """(label, reason, stage) for a pair the fast paths could not settle."""
    from gapscope.verify import schema_compare

    kind = AnswerSchema(schema)
    if _ELLIPSIS.search(answer) or _ELLIPSIS.search(gold):
        return ("NOT_ACCEPT", MISMATCH, "symbolic")
    if _UNBOUNDED.search(answer) or _UNBOUNDED.search(gold):
        # Integrals, sums, products and limits make sympy run past any deadline on released
        # golds when it evaluates them, so they are compared unevaluated (see ``same_tree``).
        if same_tree(answer, gold, kind):
            return ("ACCEPT", SYMBOLIC_MATCH, "symbolic")
        return ("NOT_ACCEPT", MISMATCH, "symbolic")
    if kind in _RELATIONS and not _LETTER.search(_COMMAND.sub("", gold)):
        # A numeric statement (``302>300``, ``\\lfloor 91/5 \\rfloor = 18``) is true or false,
        # so any other true statement would "equal" it: only the fast path's string match counts.
        return ("NOT_ACCEPT", MISMATCH, "symbolic")
    try:
        outcome = schema_compare.compare(answer, gold, kind, rel_tol)
        if outcome == "symbolic":
            return ("ACCEPT", SYMBOLIC_MATCH, "symbolic")
        if outcome == "numeric":
            return ("ACCEPT", NUMERIC_MATCH, "symbolic")
        if outcome == "no":
            return ("NOT_ACCEPT", MISMATCH, "symbolic")
        guarded = _NO_FALLBACK.search(answer) or _NO_FALLBACK.search(gold)
        verdict = None if guarded else math_verify_accepts(answer, gold, kind)
    except (RecursionError, MemoryError):
        return ("NOT_ACCEPT", TIMEOUT, "budget")
    except Exception:  # a library bug on odd input must cost this pair, not the run
        return ("NOT_ACCEPT", INTERNAL_ERROR, "symbolic")
    if verdict:
        return ("ACCEPT", MATH_VERIFY_MATCH, "math_verify")
    unparsed = outcome is None and verdict is None
    return ("NOT_ACCEPT", PARSE_ERROR if unparsed else MISMATCH, "math_verify")
