"""The bundled family set: well formed, leak-free, and every gold answer re-derived here.

Each derivation below recomputes a family's answers from the problem statement alone (brute
force or sympy), never from the stored answers, so a wrong gold fails the test.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from fractions import Fraction
from importlib import resources
from itertools import product

import pytest
import sympy
from latex2sympy2_extended import latex2sympy
from sympy import Eq, FiniteSet, Interval, Matrix, Rational, S, oo

from gapscope.ladder.families import (
    PARENT_HEAD,
    Family,
    load_bundled,
    milestone_prompt,
)
from gapscope.ladder.leak import check_leaks
from gapscope.ladder.schema import AnswerSchema, MilestoneType

x, y, m, n, s, p, t, k = sympy.symbols("x y m n s p t k")
Expected = dict[str | int, object]


def _divisor_sum(v: int) -> int:
    return sum(d for d in range(1, v + 1) if v % d == 0)


def gs001() -> Expected:
    order = next(j for j in range(1, 13) if pow(7, j, 13) == 1)
    return {"parent": pow(7, 100, 13), 0: order, 1: 100 % order}


def gs002() -> Expected:
    return {
        "parent": sympy.cancel((x**2 - 9) / (x**2 + x - 6)),
        0: sympy.factor(x**2 - 9),
        1: sympy.factor(x**2 + x - 6),
    }


def gs003() -> Expected:
    slope = Rational(8 - 2, 3 - 1)
    intercept = 2 - slope * 1
    assert slope * 3 + intercept == 8
    return {"parent": Eq(y, slope * x + intercept), 0: slope, 1: intercept}


def gs004() -> Expected:
    quadratic = x**2 + 4 * x + m
    vertex = sympy.solve(sympy.diff(quadratic, x), x)[0]
    minimum = sympy.expand(quadratic.subs(x, vertex))
    condition = sympy.solveset(minimum > 0, m, S.Reals)
    return {"parent": condition, 0: quadratic, 1: minimum}


def gs005() -> Expected:
    roots_t = sympy.solve(t**2 - 12 * t + 27, t)
    assert sympy.simplify((t**2 - 12 * t + 27).subs(t, 3**x) - (9**x - 12 * 3**x + 27)) == 0
    solutions = {sympy.nsimplify(sympy.log(r, 3)) for r in roots_t}
    assert all(9**v - 12 * 3**v + 27 == 0 for v in solutions)
    return {"parent": FiniteSet(*solutions), 0: Eq(t**2 - 12 * t + 27, 0), 1: FiniteSet(*roots_t)}


def gs006() -> Expected:
    domain = sympy.solve_univariate_inequality(6 - x - x**2 >= 0, x, relational=False)
    return {
        "parent": domain,
        0: sympy.factor(x**2 + x - 6),
        1: FiniteSet(*sympy.solve(6 - x - x**2, x)),
    }


def gs007() -> Expected:
    pairs = {(a, b) for a, b in product(range(1, 50), repeat=2) if a * a - b * b == 15}
    factor_pairs = {(d, 15 // d) for d in range(1, 16) if 15 % d == 0 and d < 15 // d}
    return {"parent": pairs, 0: sympy.factor(x**2 - y**2), 1: factor_pairs}


def gs008() -> Expected:
    a = Matrix([[2, 1], [1, 1]])
    pq = sympy.solve(list(a**2 - p * a - t * sympy.eye(2)), [p, t])
    return {"parent": a**3, 0: a**2, 1: {(pq[p], pq[t])}}


def gs009() -> Expected:
    options = {"A": 2**30, "B": 3**20, "C": 10**9, "D": 5**13}
    base = next(b for b in range(1, 100) if b**10 == 3**20)
    return {"parent": max(options, key=options.__getitem__), 0: base, 1: 5**13}


def gs010() -> Expected:
    below = range(1, 1000)
    hits = [v for v in below if (v % 3 == 0 or v % 5 == 0) and v % 15 != 0]
    return {
        "parent": len(hits),
        0: sum(v % 3 == 0 for v in below),
        1: sum(v % 5 == 0 for v in below),
        2: sum(v % 15 == 0 for v in below),
    }


def gs011() -> Expected:
    hyp = math.isqrt(20**2 + 21**2)
    assert hyp * hyp == 20**2 + 21**2
    area = Fraction(20 * 21, 2)
    radius = area / Fraction(20 + 21 + hyp, 2)
    assert radius == Fraction(20 + 21 - hyp, 2)
    return {"parent": radius, 0: 20**2 + 21**2, 1: hyp, 2: area}


def gs012() -> Expected:
    a, b = sympy.solve([x + y - 5, x * y - 3], [x, y])[0]
    assert sympy.expand((x + y) ** 3 - 3 * x * y * (x + y) - x**3 - y**3) == 0
    return {
        "parent": sympy.simplify(a**3 + b**3),
        0: s**3 - 3 * p * s,
        1: sympy.simplify(a**2 + b**2),
    }


def gs013() -> Expected:
    cx, cy = Rational(1 + 7, 2), Rational(2 + 10, 2)
    radius = sympy.sqrt((7 - 1) ** 2 + (10 - 2) ** 2) / 2
    return {"parent": Eq((x - cx) ** 2 + (y - cy) ** 2, radius**2), 0: {(cx, cy)}, 1: radius}


def gs014() -> Expected:
    g = x**2 - 6 * x + 11
    candidates = [1, 4, *[c for c in sympy.solve(sympy.diff(g, x), x) if 1 <= c <= 4]]
    values = [g.subs(x, c) for c in candidates]
    return {
        "parent": Interval(min(values), max(values)),
        0: g,
        1: {(g.subs(x, 1), g.subs(x, 4))},
    }


def gs015() -> Expected:
    return {
        "parent": FiniteSet(*[v for v in range(1, 21) if (v * v + v + 1) % 7 == 0]),
        0: FiniteSet(*[r for r in range(7) if (r * r + r + 1) % 7 == 0]),
        1: sum(v % 7 == 2 for v in range(1, 21)),
    }


def gs016() -> Expected:
    first, second = Eq(2 * x + 3 * y, 12), Eq(5 * x - y, 13)
    solution = sympy.solve([first, second], [x, y])
    eliminated = Eq(
        sympy.expand(first.lhs + 3 * second.lhs), sympy.expand(first.rhs + 3 * second.rhs)
    )
    return {
        "parent": {(solution[x], solution[y])},
        0: Eq(y, sympy.solve(second, y)[0]),
        1: eliminated,
    }


def gs017() -> Expected:
    rolls = list(product(range(1, 7), repeat=2))
    hit = Fraction(sum(a * b % 3 == 0 for a, b in rolls), len(rolls))
    single = Fraction(sum(v % 3 != 0 for v in range(1, 7)), 6)
    neither = Fraction(sum(a % 3 != 0 and b % 3 != 0 for a, b in rolls), len(rolls))
    return {"parent": hit, 0: single, 1: neither}


def gs018() -> Expected:
    return {
        "parent": sympy.factor(sympy.summation(k * (k + 1), (k, 1, n))),
        0: sympy.summation(k**2, (k, 1, n)),
        1: sympy.summation(k, (k, 1, n)),
    }


def gs019() -> Expected:
    return {"parent": _divisor_sum(360), 0: 360, 1: _divisor_sum(8), 2: _divisor_sum(9)}


def gs020() -> Expected:
    value = Fraction(36, 99)
    assert abs(float(value) - 0.36363636) < 1e-8
    return {"parent": value.numerator + value.denominator, 0: 99 * value, 1: value}


def gs021() -> Expected:
    curve = x**3 - 2 * x
    slope = sympy.diff(curve, x).subs(x, 1)
    y1 = curve.subs(x, 1)
    return {
        "parent": Eq(y, sympy.expand(slope * (x - 1) + y1)),
        0: sympy.diff(curve, x),
        1: y1,
        2: slope,
    }


def gs022() -> Expected:
    quadratic = x**2 - 2 * x - 8
    full = sympy.solve_univariate_inequality(quadratic <= 0, x, relational=False)
    return {
        "parent": full.intersect(Interval(0, oo)),
        0: FiniteSet(*sympy.solve(quadratic, x)),
        1: full,
    }


def gs023() -> Expected:
    u, v = Matrix([1, 2, 2]), Matrix([3, 0, 4])
    return {"parent": (u.dot(v) / u.dot(u)) * u, 0: u.dot(v), 1: u.dot(u)}


def gs024() -> Expected:
    digits = str(math.factorial(50))
    zeros = len(digits) - len(digits.rstrip("0"))
    options = {"A": 10, "B": 11, "C": 12, "D": 13}
    letter = next(key for key, value in options.items() if value == zeros)
    return {
        "parent": letter,
        0: sum(v % 5 == 0 for v in range(1, 51)),
        1: sum(v % 25 == 0 for v in range(1, 51)),
    }


def gs025() -> Expected:
    a, b, c = 14, 15, 13
    half = Rational(a + b + c, 2)
    area = sympy.sqrt(half * (half - a) * (half - b) * (half - c))
    return {"parent": 2 * area / a, 0: half, 1: area}


def gs026() -> Expected:
    remainder = sympy.rem(x**101 + 2 * x**50, x**2 - 1, x)
    return {"parent": remainder, 0: remainder.subs(x, 1), 1: remainder.subs(x, -1)}


DERIVATIONS: dict[str, Callable[[], Expected]] = {
    "gs-001-power-mod-13": gs001,
    "gs-002-rational-simplify": gs002,
    "gs-003-line-two-points": gs003,
    "gs-004-always-positive-quadratic": gs004,
    "gs-005-exponential-quadratic": gs005,
    "gs-006-sqrt-domain": gs006,
    "gs-007-difference-of-squares-pairs": gs007,
    "gs-008-matrix-cube": gs008,
    "gs-009-largest-power": gs009,
    "gs-010-multiples-3-or-5": gs010,
    "gs-011-inradius-right-triangle": gs011,
    "gs-012-sum-of-cubes": gs012,
    "gs-013-circle-from-diameter": gs013,
    "gs-014-range-on-interval": gs014,
    "gs-015-quadratic-residues-mod-7": gs015,
    "gs-016-linear-system": gs016,
    "gs-017-dice-product-multiple-of-3": gs017,
    "gs-018-sum-consecutive-products": gs018,
    "gs-019-divisor-sum-360": gs019,
    "gs-020-repeating-decimal": gs020,
    "gs-021-tangent-line-cubic": gs021,
    "gs-022-quadratic-inequality-nonnegative": gs022,
    "gs-023-vector-projection": gs023,
    "gs-024-trailing-zeros-50": gs024,
    "gs-025-altitude-13-14-15": gs025,
    "gs-026-polynomial-remainder": gs026,
}


def _plain(expr: sympy.Basic) -> sympy.Basic:
    """Rename symbols to assumption-free ones so parsed and derived ``x`` compare equal."""
    return expr.xreplace({v: sympy.Symbol(v.name) for v in expr.free_symbols})


def _parse(answer: str) -> sympy.Basic:
    parsed = latex2sympy(answer)
    parsed = parsed.xreplace({u: u.args[0] for u in parsed.atoms(sympy.UnevaluatedExpr)})
    return _plain(parsed)


def _pair(item: sympy.Basic) -> tuple[sympy.Basic, ...]:
    if isinstance(item, Interval):  # "(a, b)" also reads as an open interval
        return (item.start, item.end)
    assert isinstance(item, sympy.Tuple)
    return tuple(item)


def _tuples(parsed: sympy.Basic) -> set[tuple[sympy.Basic, ...]]:
    if isinstance(parsed, FiniteSet):
        return {_pair(item) for item in parsed}
    return {_pair(parsed)}


def matches(answer: str, schema: AnswerSchema, expected: object) -> bool:
    """Whether a stored answer denotes ``expected`` under its schema."""
    if schema is AnswerSchema.MCQ_STRING:
        return answer.strip() == expected
    parsed = _parse(answer)
    if schema is AnswerSchema.TUPLE_LIST:
        assert isinstance(expected, set)
        return _tuples(parsed) == {tuple(sympy.sympify(v) for v in pair) for pair in expected}
    if schema is AnswerSchema.EQUATION:
        assert isinstance(parsed, Eq) and isinstance(expected, Eq)
        ratio = sympy.simplify((parsed.lhs - parsed.rhs) / _plain(expected.lhs - expected.rhs))
        return bool(ratio.is_number and ratio != 0)
    if schema is AnswerSchema.INEQUALITY:
        assert isinstance(parsed, sympy.logic.boolalg.Boolean)
        return bool(parsed.as_set() == expected)
    if schema is AnswerSchema.MATRIX_VECTOR:
        return bool(Matrix(parsed) == expected)
    if schema is AnswerSchema.SET:  # the parser's FiniteSet is its own subclass
        assert isinstance(parsed, FiniteSet) and isinstance(expected, FiniteSet)
        return set(parsed) == set(expected)
    if schema is AnswerSchema.INTERVAL:
        assert isinstance(parsed, Interval) and isinstance(expected, Interval)
        return bool(parsed.args == expected.args)
    value = sympy.sympify(expected if not isinstance(expected, Fraction) else str(expected))
    return bool(sympy.simplify(parsed - _plain(value)) == 0)


@pytest.fixture(scope="module")
def bundled() -> list[Family]:
    result = load_bundled()
    assert result.problems == []
    return result.families


def test_bundled_set_size_and_coverage(bundled: list[Family]) -> None:
    assert len(bundled) >= 24
    schemas = {f.parent_schema for f in bundled} | {
        ms.schema for f in bundled for ms in f.milestones
    }
    assert schemas == set(AnswerSchema)
    types = {ms.type for f in bundled for ms in f.milestones}
    assert {
        MilestoneType.KEY_MOVE,
        MilestoneType.MODEL,
        MilestoneType.LEMMA,
        MilestoneType.COMPUTE,
        MilestoneType.NORMALIZE,
        MilestoneType.INTEGRATE,
    } <= types


@pytest.mark.parametrize("index", range(len(DERIVATIONS)))
def test_each_family_is_well_formed(bundled: list[Family], index: int) -> None:
    fam = bundled[index]
    assert fam.parent_schema is not None and fam.reference_solution
    assert fam.parent_prompt.startswith(PARENT_HEAD) and fam.parent_prompt.endswith("\n")
    problem = fam.parent_prompt[len(PARENT_HEAD) : -1]
    assert 2 <= len(fam.tested_milestones) <= 4
    integrate = [ms for ms in fam.milestones if ms.type is MilestoneType.INTEGRATE]
    assert len(integrate) == 1 and fam.milestones[-1] is integrate[0]
    for ms in fam.milestones:
        assert ms.schema is not None and ms.instruction is not None
        assert re.fullmatch(r"Put .+ in \\boxed\{\}\.", ms.instruction)
        assert ms.prompt == milestone_prompt(problem, ms.description, ms.instruction)


def test_raw_records_spell_out_description_and_instruction() -> None:
    text = resources.files("gapscope.ladder").joinpath("data/families.jsonl").read_text("utf-8")
    for line in text.splitlines():
        for ms in json.loads(line)["milestones"]:
            assert {"description", "instruction", "schema", "answer", "prompt"} <= set(ms)


def test_every_family_has_a_derivation(bundled: list[Family]) -> None:
    assert [f.pid for f in bundled] == list(DERIVATIONS)


@pytest.mark.parametrize("pid", list(DERIVATIONS))
def test_gold_answers_are_rederived(bundled: list[Family], pid: str) -> None:
    fam = next(f for f in bundled if f.pid == pid)
    expected = DERIVATIONS[pid]()
    assert fam.parent_schema is not None
    assert matches(fam.gold_answer, fam.parent_schema, expected["parent"]), fam.gold_answer
    assert set(expected) - {"parent"} == set(fam.tested_indices)
    for index, ms in enumerate(fam.milestones):
        assert ms.schema is not None
        want = expected["parent"] if ms.type is MilestoneType.INTEGRATE else expected[index]
        assert matches(ms.answer, ms.schema, want), (index, ms.answer, want)


def test_bundled_set_is_leak_free(bundled: list[Family]) -> None:
    report = check_leaks(bundled)
    assert report.flags == ()
    assert len(report.withheld) == len(bundled)
