"""Leak check: does a tested milestone's gold answer give away the parent answer?

If it does, C3 (roadmap + gold milestone answers) hands the student the parent answer and a
C3 success says nothing about composition (seed Appendix T). Two kinds of leak are flagged:

* ``equivalent``: the verifier accepts the milestone answer as the parent answer.
* ``trivial_transform``: one obvious step turns the parent answer into the milestone answer.
  The transforms checked, on answers that parse to a single value (an expression, or a
  labelled value such as ``x = 5``), are

  - same value (where the verifier is stricter, e.g. ``25\\%`` against ``1/4``);
  - negation (m = -p) and reciprocal (m = 1/p);
  - plus one and minus one (m = p + 1, m = p - 1);
  - double and half (m = 2p, m = p/2);
  - square and square root of either sign (m = p^2, m^2 = p);
  - percent <-> fraction (m = 100p, m = p/100);

  and, on the raw strings, the same digits ignoring formatting (separators, spaces, decimal
  point, percent and degree signs, text units, a leading ``name =`` label), e.g. ``3.14`` and
  ``314``. Expressions with variables are compared at fixed sample points, so the check is
  deterministic and needs no simplifier; answers holding sums, products, integrals, limits or
  derivatives, and sets, tuples, intervals, matrices and relations, are only checked for
  equivalence (by the verifier, which isolates slow checks).

Parsing and evaluating an answer can take unbounded time (``9^{9^{9^{9}}}`` never returns), so
the transform check runs in the verifier's killable worker pool under a wall-clock deadline; a
check past it flags the milestone ``undecided``, for a human to look at (compilation rejects it
like any other flag, so the teacher regenerates).

INTEGRATE milestones are withheld from every probe and from Stage 0 (they are not in
``Family.tested_milestones``), so they are not checked; the report lists them separately.
The parent answer checked against is ``Family.gold_answer`` (the corrected one when present).
"""

from __future__ import annotations

import cmath
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from typing import Protocol

import sympy
from latex2sympy2_extended import latex2sympy
from latex2sympy2_extended.math_normalization import NormalizationConfig

from gapscope.ladder.families import Family
from gapscope.ladder.schema import AnswerSchema, MilestoneType
from gapscope.process_shared import ProcessShared
from gapscope.verify import TaskPool


class Equivalence(Protocol):
    """The verifier's equivalence test: ``gapscope.verify.equivalent``."""

    def __call__(self, answer: str, gold: str, schema: AnswerSchema | None = None) -> bool: ...


class Transform(Protocol):
    """Finds the trivial transform between a milestone and the parent answer (or None)."""

    def __call__(self, answer: str, parent: str) -> str | None: ...


class LeakKind(StrEnum):
    EQUIVALENT = "equivalent"
    TRIVIAL_TRANSFORM = "trivial_transform"
    UNDECIDED = "undecided"


@dataclass(frozen=True)
class LeakFlag:
    """A tested milestone whose answer leaks the parent answer; the index is into
    ``Family.milestones``."""

    pid: str
    milestone_index: int
    kind: LeakKind
    detail: str


@dataclass(frozen=True)
class LeakReport:
    """Flags on tested milestones, and the INTEGRATE milestones withheld from the check."""

    flags: tuple[LeakFlag, ...]
    withheld: tuple[tuple[str, int], ...]

    def by_kind(self) -> Counter[LeakKind]:
        return Counter(flag.kind for flag in self.flags)

    def flagged_pids(self) -> set[str]:
        return {flag.pid for flag in self.flags}


# Variables are sampled on a deterministic quasi-random grid: positive (square roots and logs
# stay real), irrational-looking (coincidences between different expressions are implausible),
# spread over two orders of magnitude (step functions such as a ceiling do not look constant),
# and distinct for every variable at every point.
_N_POINTS = 4
_PHI = 0.6180339887498949
_SQRT2 = 1.4142135623730951
_REL_TOL = 1e-9
# Unevaluated calculus operators can take minutes to evaluate numerically; answers holding
# them are left to the verifier's (isolated) equivalence check.
_OPERATORS = (sympy.Sum, sympy.Product, sympy.Integral, sympy.Limit, sympy.Derivative)
_PARSE = NormalizationConfig(
    basic_latex=True, units=True, malformed_operators=True, nits=True, boxed="all"
)

_Relation = Callable[[complex, complex], tuple[complex, complex]]
# Each maps (milestone value m, parent value p) to two sides that are equal under the transform.
_RELATIONS: tuple[tuple[str, _Relation], ...] = (
    ("same value", lambda m, p: (m, p)),
    ("negation", lambda m, p: (m, -p)),
    ("reciprocal", lambda m, p: (m * p, 1)),
    ("plus one", lambda m, p: (m, p + 1)),
    ("minus one", lambda m, p: (m, p - 1)),
    ("double", lambda m, p: (m, 2 * p)),
    ("half", lambda m, p: (2 * m, p)),
    ("square", lambda m, p: (m, p * p)),
    ("square root", lambda m, p: (m * m, p)),
    ("fraction to percent", lambda m, p: (m, 100 * p)),
    ("percent to fraction", lambda m, p: (100 * m, p)),
)

_LABEL = re.compile(r"^\s*[A-Za-z](?:_\{?\w+\}?)?\s*=(?!=)")
_FORMATTING = re.compile(
    r"\\[,;:! ]|\\(?:text|mathrm|mbox)\s*\{[^{}]*\}|\\%|\^\s*\{?\\circ\}?|\\circ|[\s${}%,.'~]"
)


@lru_cache(maxsize=4096)
def _value(answer: str) -> sympy.Expr | None:
    """The single value an answer denotes, or None when it is not one value or won't parse."""
    try:
        parsed = latex2sympy(answer, normalization_config=_PARSE)
    except Exception:  # the LaTeX parser raises many types; any means "no value"
        return None
    if isinstance(parsed, sympy.Equality) and isinstance(parsed.lhs, sympy.Symbol):
        parsed = parsed.rhs
    if not isinstance(parsed, sympy.Expr) or parsed.has(*_OPERATORS):
        return None
    # The parser keeps e.g. a percent's 1/100 unevaluated; numbers are what we compare.
    return parsed.xreplace({u: u.args[0] for u in parsed.atoms(sympy.UnevaluatedExpr)})


def _evaluate(expr: sympy.Expr, point: dict[str, float]) -> complex | None:
    subs = {s: sympy.Float(point[s.name]) for s in expr.free_symbols if isinstance(s, sympy.Symbol)}
    try:
        value = complex(expr.xreplace(subs).evalf())
    except Exception:  # sympy raises many types on values it cannot evaluate numerically
        return None
    return value if cmath.isfinite(value) else None


def _points(names: Iterable[str]) -> list[dict[str, float]]:
    ordered = sorted(set(names))
    return [
        {
            name: 0.3 + 40 * (((k + 1) * _PHI + (i + 1) * _SQRT2) % 1)
            for i, name in enumerate(ordered)
        }
        for k in range(_N_POINTS)
    ]


def _close(a: complex, b: complex) -> bool:
    return abs(a - b) <= _REL_TOL * max(1.0, abs(a), abs(b))


def _numeric_transform(answer: str, parent: str) -> str | None:
    m_expr, p_expr = _value(answer), _value(parent)
    if m_expr is None or p_expr is None:
        return None
    names = [
        s.name for s in (m_expr.free_symbols | p_expr.free_symbols) if isinstance(s, sympy.Symbol)
    ]
    pairs: list[tuple[complex, complex]] = []
    for point in _points(names):
        m, p = _evaluate(m_expr, point), _evaluate(p_expr, point)
        if m is None or p is None:
            return None
        pairs.append((m, p))
    for name, relation in _RELATIONS:
        if all(_close(*relation(m, p)) for m, p in pairs):
            return name
    return None


def _digits(answer: str) -> str | None:
    """The digit string of an answer made of digits and formatting only, else None."""
    rest = _FORMATTING.sub("", _LABEL.sub("", answer, count=1))
    if not (rest.isascii() and rest.isdigit()):
        return None
    return rest.lstrip("0") or "0"


def trivial_transform(answer: str, parent: str) -> str | None:
    """The name of the trivial transform that turns ``parent`` into ``answer``, if any."""
    found = _numeric_transform(answer, parent)
    if found is not None:
        return found
    digits = _digits(answer)
    if digits is not None and digits == _digits(parent):
        return "same digits"
    return None


UNDECIDED = "undecided"
"""What a guarded transform check returns when it ran past its deadline."""

TRANSFORM_TIMEOUT_S = 5.0


class GuardedTransform:
    """:func:`trivial_transform` in a killable worker process with a wall-clock deadline
    (the verifier's pool); returns :data:`UNDECIDED` for a check past ``timeout_s``."""

    def __init__(self, timeout_s: float = TRANSFORM_TIMEOUT_S, memory_mb: int | None = 4096):
        self.timeout_s = timeout_s
        self._pool: TaskPool[str | None] = TaskPool(trivial_transform, 1, memory_mb)

    def __call__(self, answer: str, parent: str) -> str | None:
        return self._pool.run([(answer, parent)], self.timeout_s, UNDECIDED)[0]

    def close(self) -> None:
        """Stop the worker; it restarts on the next call."""
        self._pool.close()


_shared = ProcessShared(GuardedTransform)


def _default_transform() -> Transform:
    return _shared.get()


def _default_equivalence() -> Equivalence:
    from gapscope.verify import equivalent

    return equivalent


def check_family(
    family: Family, equivalent: Equivalence | None = None, transform: Transform | None = None
) -> list[LeakFlag]:
    """Flags for the tested milestones of one family (at most one flag per milestone).

    ``transform`` defaults to the guarded (deadline-bounded) :func:`trivial_transform`.
    """
    same = equivalent if equivalent is not None else _default_equivalence()
    find = transform if transform is not None else _default_transform()
    gold = family.gold_answer
    flags: list[LeakFlag] = []
    for index in family.tested_indices:
        answer = family.milestones[index].answer
        if same(answer, gold, schema=family.parent_schema):
            detail = f"milestone answer {answer!r} is equivalent to the parent answer {gold!r}"
            flags.append(LeakFlag(family.pid, index, LeakKind.EQUIVALENT, detail))
            continue
        found = find(answer, gold)
        if found == UNDECIDED:
            detail = f"transform check of {answer!r} against {gold!r} ran out of time"
            flags.append(LeakFlag(family.pid, index, LeakKind.UNDECIDED, detail))
        elif found is not None:
            detail = f"{found}: milestone answer {answer!r}, parent answer {gold!r}"
            flags.append(LeakFlag(family.pid, index, LeakKind.TRIVIAL_TRANSFORM, detail))
    return flags


def check_leaks(
    families: Sequence[Family],
    equivalent: Equivalence | None = None,
    transform: Transform | None = None,
) -> LeakReport:
    """Leak flags for every family, plus the INTEGRATE milestones that were not checked."""
    same = equivalent if equivalent is not None else _default_equivalence()
    find = transform if transform is not None else _default_transform()
    flags = [flag for family in families for flag in check_family(family, same, find)]
    withheld = tuple(
        (family.pid, i)
        for family in families
        for i, m in enumerate(family.milestones)
        if m.type is MilestoneType.INTEGRATE
    )
    return LeakReport(flags=tuple(flags), withheld=withheld)
