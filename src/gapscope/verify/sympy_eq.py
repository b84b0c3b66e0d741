"""LaTeX to sympy, and equality of two scalar expressions (runs only inside pool workers).

Equality is tried cheapest-refutation first: numbers are compared at 60 digits, expressions
at random rational points, so a wrong answer is rejected before ``simplify`` ever runs. A
numerical agreement is confirmed with ``expand``/``simplify``; when sympy cannot confirm it, the
agreement still counts ("numeric") only if it held at points of both signs, because identities
like ``sqrt(x^2) = x`` hold on positives alone.
"""

from __future__ import annotations

import math
import random
from functools import lru_cache

import sympy
from latex2sympy2_extended import latex2sympy
from latex2sympy2_extended.latex2sympy2 import ConversionConfig
from latex2sympy2_extended.math_normalization import NormalizationConfig

from gapscope.verify.evidence import Evidence

_NORMALIZATION = NormalizationConfig(
    basic_latex=True,
    units=False,
    malformed_operators=True,
    nits=False,
    boxed="none",
    equations=False,
)
_CONVERSION = ConversionConfig(
    interpret_as_mixed_fractions=False,
    interpret_simple_eq_as_assignment=False,
    interpret_contains_as_eq=True,
    lowercase_symbols=False,
)
_EXACT_TOL = 1e-30
_POINT_TOL = 1e-10
_SEED = 20240531


class ParseFailure(ValueError):
    """The LaTeX could not be turned into a sympy object."""


@lru_cache(maxsize=8192)
def parse(latex: str) -> sympy.Basic:
    """The sympy object a LaTeX string denotes, with decimals made exact rationals."""
    if not latex.strip():
        raise ParseFailure("empty")
    if "'" in latex:  # a prime (``y'``) is a derivative, which the LaTeX parser drops
        raise ParseFailure(latex)
    try:
        expr = latex2sympy(
            latex, normalization_config=_NORMALIZATION, conversion_config=_CONVERSION
        )
    except (RecursionError, MemoryError):
        raise
    except Exception as exc:
        raise ParseFailure(latex) from exc
    if not isinstance(expr, sympy.Basic | sympy.MatrixBase):
        raise ParseFailure(latex)
    floats = expr.atoms(sympy.Float)
    return expr.xreplace({f: sympy.Rational(str(f)) for f in floats}) if floats else expr


def has_decimal(latex: str) -> bool:
    """Whether the writer used a decimal literal, which licenses a relative tolerance."""
    return any(
        ch == "." and i + 1 < len(latex) and latex[i + 1].isdigit() for i, ch in enumerate(latex)
    )


def evaluated(expr: sympy.Basic) -> sympy.Basic:
    """``expr`` with every sum, product and power built anew, i.e. evaluated.

    The LaTeX parser returns unevaluated ``Mul``/``Pow`` nodes, and ``sympy.N`` on a chain of
    them (``\\frac{1}{\\frac{1}{...}}`` nested 20 deep) takes time exponential in the depth:
    60 levels, well inside the nesting cap, ran into the deadline. Rebuilt bottom-up, the
    same chain is the number 2 in microseconds. Nothing else is evaluated (no ``doit``: a
    sum or integral keeps its own numeric evaluation).
    """
    if not isinstance(expr, sympy.Add | sympy.Mul | sympy.Pow) or not expr.args:
        return expr
    args = [evaluated(arg) for arg in expr.args]
    if isinstance(expr, sympy.Pow) and _huge_power(args[0], args[1]):
        return sympy.Pow(*args, evaluate=False)  # ``2^{2^{30}}``: left for N's floats
    return expr.func(*args)


_MAX_EXACT_DIGITS = 10_000


def _huge_power(base: sympy.Basic, exponent: sympy.Basic) -> bool:
    """Whether ``base^exponent`` of two numbers has more digits than is worth building."""
    if not (base.is_Number and exponent.is_Number):
        return False
    try:
        size = abs(float(exponent)) * math.log10(max(abs(float(base)), 2.0))
    except (OverflowError, TypeError, ValueError):
        return True
    return size > _MAX_EXACT_DIGITS


def number(expr: sympy.Basic, digits: int = 30) -> complex | None:
    """The complex value of a closed expression, None when it has symbols or is not finite."""
    try:
        value = sympy.N(evaluated(expr), digits)
        if not value.is_number:
            return None
        result = complex(value)
    except (TypeError, ValueError, ZeroDivisionError, AttributeError):
        return None
    if result != result or abs(result) == float("inf"):
        return None
    return result


def is_zero(expr: sympy.Expr) -> bool:
    """Whether sympy can prove ``expr == 0`` (expand first: it is cheap and often enough)."""
    try:
        if sympy.expand(expr) == 0:
            return True
        return bool(sympy.simplify(expr) == 0)
    except (TypeError, ValueError, AttributeError, NotImplementedError):
        return False


def points(
    symbols: list[sympy.Symbol], sign: int, count: int
) -> list[dict[sympy.Basic, sympy.Basic]]:
    """Deterministic random rational points, all coordinates of sign ``sign``."""
    rng = random.Random(_SEED + sign)
    return [
        {s: sign * sympy.Rational(rng.randint(7, 60), rng.randint(5, 23)) for s in symbols}
        for _ in range(count)
    ]


def close(a: complex, b: complex, tol: float) -> bool:
    """Relative closeness with an absolute floor of ``tol``."""
    return abs(a - b) <= tol * max(1.0, abs(b))


def _probe(
    a: sympy.Expr, g: sympy.Expr, symbols: list[sympy.Symbol], sign: int, tol: float
) -> tuple[int, bool]:
    """(points where both sides evaluate, whether any such point disagreed)."""
    agree = 0
    for point in points(symbols, sign, 6):
        va, vg = number(a.xreplace(point), 20), number(g.xreplace(point), 20)
        if va is None or vg is None:
            continue
        if not close(va, vg, tol):
            return agree, True
        agree += 1
    return agree, False


def scalar_eq(a: sympy.Basic, g: sympy.Basic, approx: bool, rel_tol: float) -> Evidence:
    """Equality of two scalar expressions; ``approx`` when the answer wrote decimals."""
    if not isinstance(g, sympy.Expr):
        return "unknown"
    if not isinstance(a, sympy.Expr):
        return "no"
    if a == g:
        return "symbolic"
    if _undefined(a) or _undefined(g):
        return "no"  # ``12:00`` read as 12/0: two different strings are not equal infinities
    diff = a - g
    symbols = sorted(diff.free_symbols, key=str)
    if not symbols:
        return _constant_eq(a, g, diff, approx, rel_tol)
    tol = rel_tol if approx else _POINT_TOL
    pos_agree, pos_bad = _probe(a, g, symbols, 1, tol)
    if pos_bad:
        return "no"
    if is_zero(diff):
        return "symbolic"
    neg_agree, neg_bad = _probe(a, g, symbols, -1, tol)
    if pos_agree >= 3 and neg_agree >= 3 and not neg_bad:
        return "numeric"
    return "unknown"


def _undefined(expr: sympy.Expr) -> bool:
    return bool(expr.has(sympy.zoo, sympy.nan))


def _constant_eq(
    a: sympy.Expr, g: sympy.Expr, diff: sympy.Expr, approx: bool, rel_tol: float
) -> Evidence:
    va, vg = number(a, 60), number(g, 60)
    if va is None or vg is None:
        return "symbolic" if is_zero(diff) else "unknown"
    if approx:
        return "numeric" if abs(va - vg) <= rel_tol * max(abs(vg), 1e-12) else "no"
    gap = number(diff, 60)
    if gap is None or abs(gap) > _EXACT_TOL * max(1.0, abs(vg)):
        return "no"
    # Agreement to 30 digits: ``simplify`` would only rename the reason, and on nested
    # radicals it can take longer than the whole deadline.
    return "symbolic" if sympy.expand(diff) == 0 else "numeric"


def constant_ratio(da: sympy.Expr, dg: sympy.Expr, positive: bool) -> Evidence:
    """Whether ``da = k * dg`` for a constant ``k`` (``k > 0`` when ``positive``)."""
    symbols = sorted((da.free_symbols | dg.free_symbols), key=str)
    ratios: list[complex] = []
    for sign in (1, -1):
        for point in points(symbols, sign, 5):
            va, vg = number(da.xreplace(point), 20), number(dg.xreplace(point), 20)
            if va is not None and vg is not None and abs(vg) > 1e-9:
                ratios.append(va / vg)
    if ratios:
        k = ratios[0]
        if abs(k) < 1e-12 or any(not close(r, k, 1e-8) for r in ratios):
            return "no"
        if positive and (abs(k.imag) > 1e-12 or k.real <= 0):
            return "no"
    try:
        ratio = sympy.simplify(sympy.cancel(sympy.together(da / dg)))
    except (TypeError, ValueError, ZeroDivisionError, NotImplementedError):
        ratio = None
    if ratio is not None and not ratio.free_symbols and ratio != 0 and ratio.is_finite:
        if positive and not ratio.is_positive:
            return "no"
        return "symbolic"
    return "numeric" if len(ratios) >= 6 else "unknown"
