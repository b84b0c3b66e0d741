"""The numeric fallback's threshold: two sides sympy cannot prove equal are "numeric" only
when both evaluate, and agree, at 3 or more of the 6 positive points and of the 6 negative
ones. The sides below overflow (no value) beyond a point, so exactly that many points count;
``|x|^2`` against ``x^2`` is an identity on the reals that sympy, with ``x`` complex, cannot
prove."""

from __future__ import annotations

import pytest
import sympy

from gapscope.verify.sympy_eq import _POINT_TOL, _probe, scalar_eq

X = sympy.Symbol("x")


@pytest.mark.parametrize(
    ("rate", "defined", "evidence"),
    [
        (3, (3, 6), "numeric"),  # overflows at the 3 largest positive points
        (-3, (6, 3), "numeric"),  # at the 3 most negative points
        (6, (2, 6), "unknown"),  # 2 positive points are too few
    ],
)
def test_numeric_equality_needs_three_defined_points_on_each_side(
    rate: int, defined: tuple[int, int], evidence: str
) -> None:
    overflow = sympy.exp(sympy.exp(rate * X))
    answer, gold = overflow + sympy.Abs(X) ** 2, overflow + X**2
    counts = tuple(_probe(answer, gold, [X], sign, _POINT_TOL) for sign in (1, -1))
    assert counts == ((defined[0], False), (defined[1], False))
    assert scalar_eq(answer, gold, False, 1e-6) == evidence
