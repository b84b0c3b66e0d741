"""Schema-aware comparison of a normalised answer against a gold (runs inside pool workers).

Each schema fixes what "the same answer" means: a SET ignores order and repeats, a TUPLE_LIST
keeps order inside a tuple but not between tuples, an INTERVAL cares about open and closed ends,
an INEQUALITY is its solution set (so ``x > 2`` equals ``(2, \\infty)`` but never ``x < 2``),
an EQUATION is equal up to a constant factor of ``lhs - rhs``. The structure is split off as
strings first (bracket-aware), and only the leaves go through sympy.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import sympy
from sympy.solvers.inequalities import solve_univariate_inequality

from gapscope.verify.evidence import Evidence, all_of, any_of, bag_match
from gapscope.verify.normalize import Marks, canonical, is_label, is_variable, strip_assignment
from gapscope.verify.schema import AnswerSchema
from gapscope.verify.split import has_top, split_top, wrapped
from gapscope.verify.sympy_eq import (
    ParseFailure,
    constant_ratio,
    has_decimal,
    parse,
    scalar_eq,
)

_LIST = (",", ";", " or ", " and ")
_EMPTY = re.compile(r"^(?:\\emptyset|\\\{\s*\\\}|\{\s*\}|no\s*(?:real\s*)?solutions?|none)$", re.I)
_REALS = re.compile(r"^\\mathbb\s*\{?R\}?$|^\(-\\infty,\s*\\infty\)$")
_RELATION = re.compile(r"\\le |\\ge |<|>")
_NAME = re.compile(r"^(?:[A-Za-z]|\\[a-z]+)(?:_\{?\w*\}?)?$")

Compare = Callable[[str, str, Marks, Marks, float], Evidence]


class NotComparable(ValueError):
    """The structure could not be read (an unsupported shape, a multivariate set, ...)."""


def _leaf(text: str) -> tuple[sympy.Basic, bool]:
    return parse(text), has_decimal(text)


def _scalar(a_text: str, g_text: str, rel_tol: float) -> Evidence:
    a, approx = _leaf(a_text)
    return scalar_eq(a, parse(g_text), approx, rel_tol)


def _scaled(value: sympy.Basic, mine: Marks, other: Marks) -> list[sympy.Basic]:
    """Readings of a value once a percent or degree sign on one side only is resolved."""
    values = [value]
    if mine.percent and not other.percent:
        values.append(value / 100)
    if other.degree and not mine.degree and value.has(sympy.pi):
        values.append(value * 180 / sympy.pi)
    return values


def compare_number(
    a_text: str, g_text: str, a_marks: Marks, g_marks: Marks, rel_tol: float
) -> Evidence:
    """NUMBER and EXPR: one scalar, with percent/degree readings."""
    a, approx = _leaf(a_text)
    g = parse(g_text)
    approx = approx or has_decimal(g_text)  # tolerance both ways: a decimal gold is rounded too
    return any_of(
        scalar_eq(x, y, approx, rel_tol)
        for x in _scaled(a, a_marks, g_marks)
        for y in _scaled(g, g_marks, a_marks)
    )


def _set_body(text: str) -> str:
    if text.startswith("\\{") and text.endswith("\\}"):
        return text[2:-2].strip()
    return text


def _set_items(text: str) -> list[str]:
    text = strip_assignment(text)
    if _EMPTY.match(text.strip()):
        return []
    items: list[str] = []
    for item in split_top(_set_body(text), _LIST):
        item = strip_assignment(item)
        if "\\pm" in item or "\\mp" in item:
            items += [
                item.replace("\\pm", "+").replace("\\mp", "-"),
                item.replace("\\pm", "-").replace("\\mp", "+"),
            ]
        elif item:
            items.append(item)
    return items


def compare_set(
    a_text: str, g_text: str, a_marks: Marks, g_marks: Marks, rel_tol: float
) -> Evidence:
    """SET: order- and multiplicity-insensitive elements."""
    answers = [_leaf(x) for x in _set_items(a_text)]
    golds = [parse(x) for x in _set_items(g_text)]
    return bag_match(answers, golds, lambda a, g: scalar_eq(a[0], g, a[1], rel_tol))


def _tuples(text: str, names: list[str] | None) -> list[list[str]]:
    sides = split_top(text, ("=",))
    if len(sides) == 2 and (w := wrapped(sides[0])) is not None and has_top(w[1], ","):
        text = sides[1]
    text = _set_body(text)
    if (
        (w := wrapped(text)) is not None
        and w[0] == "["
        and all(wrapped(i) for i in split_top(w[1], _LIST))
    ):
        text = w[1]
    items = split_top(text, _LIST)
    if all((w := wrapped(i)) is not None and w[0] in "([" for i in items):
        return [_components(i[1:-1]) for i in items]
    if names and all(len(split_top(i, ("=",))) == 2 for i in items):
        given = {split_top(i, ("=",))[0]: split_top(i, ("=",))[1] for i in items}
        if set(given) == set(names):
            return [[given[n] for n in names]]
    raise NotComparable(text)


def _components(inner: str) -> list[str]:
    """A tuple's components: comma-separated, or semicolon-separated (``(0;-2;6)``)."""
    return split_top(inner, ("," if has_top(inner, ",") else ";",))


def _tuple_names(text: str) -> list[str] | None:
    sides = split_top(text, ("=",))
    if len(sides) == 2 and (w := wrapped(sides[0])) is not None:
        names = split_top(w[1], (",",))
        if all(_NAME.match(n) for n in names):
            return names
    return None


def compare_tuples(
    a_text: str, g_text: str, a_marks: Marks, g_marks: Marks, rel_tol: float
) -> Evidence:
    """TUPLE_LIST: ordered components, unordered list of tuples."""
    names = _tuple_names(g_text)
    answer_names = _tuple_names(a_text)
    if (
        names
        and answer_names
        and [n.replace(" ", "") for n in names] != [n.replace(" ", "") for n in answer_names]
    ):
        return "no"  # ``(b_1,b_0)=(...)`` does not answer ``(b_1,b_3)=(...)``
    golds = [[parse(x) for x in t] for t in _tuples(g_text, None)]
    answers = [[_leaf(x) for x in t] for t in _tuples(a_text, names)]

    def same(a: list[tuple[sympy.Basic, bool]], g: list[sympy.Basic]) -> Evidence:
        if len(a) != len(g):
            return "no"
        return all_of(scalar_eq(x, y, approx, rel_tol) for (x, approx), y in zip(a, g, strict=True))

    return bag_match(answers, golds, same)


def _variable(*objects: sympy.Basic) -> sympy.Symbol:
    symbols: set[sympy.Basic] = set()
    for obj in objects:
        symbols |= obj.free_symbols
    if len(symbols) != 1:
        raise NotComparable("not univariate")
    (symbol,) = symbols
    assert isinstance(symbol, sympy.Symbol)
    return symbol


def _relation_set(rel: sympy.Basic) -> sympy.Set:
    if isinstance(rel, sympy.And):
        return sympy.Intersection(*[_relation_set(r) for r in rel.args])
    if isinstance(rel, sympy.Or):
        return sympy.Union(*[_relation_set(r) for r in rel.args])
    if not isinstance(rel, sympy.core.relational.Relational):
        raise NotComparable(str(rel))
    result = solve_univariate_inequality(rel, _variable(rel), relational=False)
    assert isinstance(result, sympy.Set)
    return result


def to_set(text: str) -> sympy.Set:
    """The real set an interval, union, finite set or univariate inequality denotes."""
    text = strip_assignment(text.strip())
    if _EMPTY.match(text):
        return sympy.S.EmptySet
    if _REALS.match(text):
        return sympy.S.Reals
    pieces = split_top(text, ("\\cup", " or "))
    if len(pieces) > 1:
        return sympy.Union(*[to_set(p) for p in pieces])
    conj = split_top(text, (" and ", "\\cap"))
    if len(conj) > 1:
        return sympy.Intersection(*[to_set(p) for p in conj])
    w = wrapped(text)
    if (
        w is not None
        and w[0] in "(["
        and w[2] in ")]"
        and len(ends := split_top(w[1], (",",))) == 2
    ):
        lo, hi = parse(ends[0]), parse(ends[1])
        return sympy.Interval(lo, hi, left_open=w[0] == "(", right_open=w[2] == ")")
    if text.startswith("\\{"):
        return sympy.FiniteSet(*[parse(x) for x in _set_items(text)])
    if _RELATION.search(text):
        return _relation_set(parse(text))
    return sympy.FiniteSet(parse(text))


def sets_equal(a: sympy.Set, g: sympy.Set) -> Evidence:
    """Set equality by both complements being empty; unknown when sympy cannot evaluate."""
    if a == g:
        return "symbolic"
    left, right = sympy.Complement(a, g), sympy.Complement(g, a)
    if left is sympy.S.EmptySet and right is sympy.S.EmptySet:
        return "symbolic"
    evaluated = not any(isinstance(x, sympy.Complement) for x in (left, right))
    return "no" if evaluated else "unknown"


def compare_interval(
    a_text: str, g_text: str, a_marks: Marks, g_marks: Marks, rel_tol: float
) -> Evidence:
    """INTERVAL: the denoted real sets are equal (endpoints and their openness matter)."""
    return sets_equal(to_set(a_text), to_set(g_text))


def _canonical_relations(rel: sympy.Basic) -> list[tuple[str, sympy.Expr]]:
    """Each relation as ``expr > 0`` / ``expr >= 0`` / ``expr != 0``."""
    if isinstance(rel, sympy.And):
        return [r for arg in rel.args for r in _canonical_relations(arg)]
    if not isinstance(rel, sympy.core.relational.Relational) or isinstance(rel, sympy.Eq):
        raise NotComparable(str(rel))
    op, diff = rel.rel_op, rel.lhs - rel.rhs
    kinds = {">": ">", ">=": ">=", "<": ">", "<=": ">=", "!=": "!="}
    return [(kinds[op], -diff if op in ("<", "<=") else diff)]


def compare_inequality(
    a_text: str, g_text: str, a_marks: Marks, g_marks: Marks, rel_tol: float
) -> Evidence:
    """INEQUALITY: same real solution set when univariate, else same relation up to k > 0."""
    gold = parse(g_text)
    if isinstance(gold, sympy.logic.boolalg.BooleanAtom):
        raise NotComparable("gold relation evaluates to a constant")
    if len(gold.free_symbols) == 1:
        try:
            return sets_equal(to_set(a_text), to_set(g_text))
        except NotComparable:
            pass
    answer = parse(a_text)
    if isinstance(answer, sympy.logic.boolalg.BooleanAtom):
        return "no"

    def same(a: tuple[str, sympy.Expr], g: tuple[str, sympy.Expr]) -> Evidence:
        if a[0] != g[0]:
            return "no"
        return constant_ratio(a[1], g[1], positive=a[0] != "!=")

    return bag_match(_canonical_relations(answer), _canonical_relations(gold), same)


def _equations(text: str) -> list[tuple[str, str] | str]:
    found: list[tuple[str, str] | str] = []
    for item in split_top(text, _LIST):
        sides = split_top(item, ("=",))
        if len(sides) == 1:
            found.append(item)
        found += [(sides[i], sides[i + 1]) for i in range(len(sides) - 1)]
    return found


def _labelled_eq(a: tuple[str, str], g: tuple[str, str], rel_tol: float) -> Evidence | None:
    """``f(3) = 7`` against ``f(4) = 7``: when a side names a value rather than being a
    variable of the equation, the names must agree and the values are compared; None when
    both left sides are plain variables (then the equations are compared as equations)."""
    if not (is_label(a[0]) and is_label(g[0])):
        return None
    name = a[0].replace(" ", "")
    if name == g[0].replace(" ", ""):
        return _scalar(a[1], g[1], rel_tol)
    if a[1].replace(" ", "") == g[0].replace(
        " ", ""
    ):  # ``\\frac{x}{b} = r`` for ``r = \\frac{x}{b}``
        return _scalar(a[0], g[1], rel_tol)
    return None if is_variable(a[0]) and is_variable(g[0]) else "no"


def _equation_eq(a: tuple[str, str], g: tuple[str, str], rel_tol: float) -> Evidence:
    if (labelled := _labelled_eq(a, g, rel_tol)) is not None:
        return labelled
    al, ar, gl, gr = parse(a[0]), parse(a[1]), parse(g[0]), parse(g[1])
    if not all(isinstance(x, sympy.Expr) for x in (al, ar, gl, gr)):
        return "unknown"
    if (al, ar) in ((gl, gr), (gr, gl)):  # same or swapped sides: no identity test needed
        return "symbolic"
    if scalar_eq(gl, gr, False, rel_tol) in ("symbolic", "numeric"):
        return any_of(
            [
                all_of(scalar_eq(x, y, False, rel_tol) for x, y in ((al, gl), (ar, gr))),
                all_of(scalar_eq(x, y, False, rel_tol) for x, y in ((al, gr), (ar, gl))),
            ]
        )
    da, dg = al - ar, gl - gr
    proportional = constant_ratio(da, dg, positive=False)
    if proportional != "no":
        return proportional
    symbols = da.free_symbols | dg.free_symbols
    if len(symbols) == 1 and da.is_rational_function() and dg.is_rational_function():
        (x,) = symbols
        return sets_equal(
            sympy.solveset(da, x, sympy.S.Complexes), sympy.solveset(dg, x, sympy.S.Complexes)
        )
    return "no"


def compare_equation(
    a_text: str, g_text: str, a_marks: Marks, g_marks: Marks, rel_tol: float
) -> Evidence:
    """EQUATION: equations equal up to a constant factor, or the same roots; a bare answer
    equals a gold ``name = value``."""
    golds, answers = _equations(g_text), _equations(a_text)
    if all(isinstance(x, str) for x in answers):
        # Bare values against labelled golds (``x_1 = ..., x_2 = ...``): the solution values.
        values = [g[1] for g in golds if isinstance(g, tuple) and is_label(g[0])]
        if len(values) != len(golds):
            return "no"
        bare = [_leaf(x) for x in answers if isinstance(x, str)]
        return bag_match(
            bare, [parse(v) for v in values], lambda x, y: scalar_eq(x[0], y, x[1], rel_tol)
        )
    pairs = [x for x in answers if isinstance(x, tuple)]
    gold_pairs = [x for x in golds if isinstance(x, tuple)]
    if len(pairs) != len(answers) or len(gold_pairs) != len(golds):
        return "unknown"
    return bag_match(pairs, gold_pairs, lambda a, g: _equation_eq(a, g, rel_tol))


def _entries(text: str) -> tuple[tuple[int, int], list[sympy.Basic]]:
    if "\\begin" in text:
        matrix = parse(text)
        if not isinstance(matrix, sympy.MatrixBase):
            raise NotComparable(text)
        shape = (int(matrix.shape[0]), int(matrix.shape[1]))
        entries = list(matrix)
    else:
        w = wrapped(text)
        body = w[1] if w is not None and w[0] in "([" else text
        entries = [parse(x) for x in split_top(body, (",",))]
        shape = (len(entries), 1)
    if 1 in shape:
        shape = (max(shape), 1)
    return shape, entries


def compare_matrix(
    a_text: str, g_text: str, a_marks: Marks, g_marks: Marks, rel_tol: float
) -> Evidence:
    """MATRIX_VECTOR: same shape (row and column vectors agree), equal entries."""
    a_shape, a_entries = _entries(a_text)
    g_shape, g_entries = _entries(g_text)
    if a_shape != g_shape:
        return "no"
    approx = has_decimal(a_text)
    return all_of(
        scalar_eq(a, g, approx, rel_tol) for a, g in zip(a_entries, g_entries, strict=True)
    )


_COMPARE: dict[AnswerSchema, Compare] = {
    AnswerSchema.NUMBER: compare_number,
    AnswerSchema.EXPR: compare_number,
    AnswerSchema.SET: compare_set,
    AnswerSchema.TUPLE_LIST: compare_tuples,
    AnswerSchema.INTERVAL: compare_interval,
    AnswerSchema.INEQUALITY: compare_inequality,
    AnswerSchema.EQUATION: compare_equation,
    AnswerSchema.MATRIX_VECTOR: compare_matrix,
}


def compare(answer: str, gold: str, schema: AnswerSchema, rel_tol: float) -> Evidence | None:
    """The symbolic outcome, or None when either side cannot be parsed under the schema."""
    handler = _COMPARE.get(schema)
    if handler is None:
        return "unknown"
    a_text, a_marks = canonical(answer, schema)
    g_text, g_marks = canonical(gold, schema)
    try:
        return handler(a_text, g_text, a_marks, g_marks, rel_tol)
    except (ParseFailure, NotComparable):
        return None
    except (TypeError, ValueError, AttributeError, NotImplementedError, KeyError):
        return "unknown"
