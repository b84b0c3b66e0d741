"""A small mutation job over gapscope's scientific core: do the tests notice a wrong operator?

``make mutate`` (never part of ``make test``) runs it. For each target function below it makes
one mutant per mutation point - a comparison flipped (``<`` / ``<=``, ``==`` / ``!=``, ``in`` /
``not in``, ``is`` / ``is not``), ``and`` / ``or`` swapped, a ``not`` dropped, ``+`` / ``-`` and
``*`` / ``/`` swapped, a numeric constant moved by one, ``True`` / ``False`` swapped - and runs
the target's tests against it. A mutant is *killed* when a test fails (or the run exceeds its
time limit), *survived* when every test passes. The worktree is never edited: the sources are
copied to a temporary directory, the mutated module is written there, and pytest runs with
that copy first on ``PYTHONPATH``.

    python tools/mutate.py                 # every target, the report on stdout
    python tools/mutate.py --only bleu     # targets whose name contains "bleu"
    python tools/mutate.py --list          # the mutants, without running anything
    python tools/mutate.py --sample 12     # at most 12 mutants per target, spread evenly
    python tools/mutate.py --json out.json # also write every mutant's outcome

Mutation testing says where the tests are blind; a surviving mutant needs a test, or a
written reason why it is equivalent (it cannot change behaviour) - see docs/mutation.md.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Target:
    """Functions of one module and the tests that should catch a change to them."""

    name: str
    module: str
    functions: tuple[str, ...]
    tests: tuple[str, ...]
    select: str = ""
    """A pytest ``-k`` expression: the fast tests of ``tests`` that exercise the functions."""


TARGETS = (
    Target(
        "verifier equivalence",
        "src/gapscope/verify/sympy_eq.py",
        ("scalar_eq", "_probe", "close"),
        ("tests/verify/test_sign_guard.py", "tests/verify/test_written_forms.py"),
    ),
    Target(
        "ZSCT",
        "src/gapscope/s2b/metrics.py",
        ("adj_zsct", "accuracy_percent"),
        ("tests/s2b/test_zsct.py",),
    ),
    Target(
        "quadrant test",
        "src/gapscope/stats/quadrant.py",
        ("median_split", "exact_p_value", "quadrant_test"),
        ("tests/stats/test_quadrant.py",),
        "not cli and not csv",
    ),
    Target(
        "T2 counting",
        "src/gapscope/t2/metrics.py",
        ("summarize_context", "_rows_of", "_tested", "_value", "_precision", "_t2_text_metrics"),
        ("tests/t2/test_metrics.py",),
    ),
    Target(
        "taxonomy",
        "src/gapscope/ladder/taxonomy.py",
        ("outcome", "passes_stage0", "gap"),
        ("tests/ladder/test_taxonomy.py",),
    ),
    Target(
        "Lean acceptance",
        "src/gapscope/lean/soundness.py",
        ("_judge", "is_sorry_warning", "_after_code", "_is_query_error"),
        ("tests/lean/test_soundness.py",),
    ),
    Target(
        "controls",
        "src/gapscope/stats/paired.py",
        ("mcnemar_exact",),
        ("tests/analysis/test_compare.py",),
        "mcnemar",
    ),
    Target(
        "containment",
        "src/gapscope/ladder/containment.py",
        ("contains_token", "containment"),
        ("tests/ladder/test_containment.py",),
        "not ladder_report",
    ),
    Target(
        "BLEU",
        "src/gapscope/t2/bleu.py",
        ("sentence_bleu", "exact_match", "bucket_of", "ta_by_bleu"),
        ("tests/t2/test_bleu.py",),
    ),
)

_COMPARE_SWAP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_BINOP_SWAP: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Mult,
}


@dataclass(frozen=True)
class Mutant:
    """One change: where (function, line) and what (before -> after)."""

    target: str
    function: str
    line: int
    change: str
    index: int


def _points(function: ast.AST) -> Iterator[tuple[ast.AST, str]]:
    """Every mutable node of ``function`` with a description of its change (docstrings and
    string constants are left alone)."""
    for node in ast.walk(function):
        if isinstance(node, ast.Compare):
            for op in node.ops:
                if type(op) in _COMPARE_SWAP:
                    after = _COMPARE_SWAP[type(op)].__name__
                    yield node, f"{type(op).__name__} -> {after}"
        elif isinstance(node, ast.BoolOp):
            yield node, "and <-> or"
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            yield node, "drop not"
        elif isinstance(node, ast.BinOp) and type(node.op) in _BINOP_SWAP:
            yield node, f"{type(node.op).__name__} -> {_BINOP_SWAP[type(node.op)].__name__}"
        elif isinstance(node, ast.Constant) and type(node.value) in (int, float, bool):
            yield node, f"{node.value!r} -> {_moved(node.value)!r}"


def _moved(value: object) -> bool | int | float:
    """A constant moved: a flag flipped, a number moved by one."""
    if isinstance(value, bool):
        return not value
    assert isinstance(value, int | float)
    return value + 1


def _functions(tree: ast.Module, names: tuple[str, ...]) -> Iterator[ast.FunctionDef]:
    """The target functions, top-level or methods (by name)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name in names:
            yield node


class _DropNot(ast.NodeTransformer):
    """Replaces one ``not x`` node (by identity) with ``x``."""

    def __init__(self, target: ast.AST) -> None:
        self.target = target

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        return node.operand if node is self.target else node


def _apply(tree: ast.Module, node: ast.AST, change: str) -> None:
    """Mutate ``node`` of ``tree`` as ``change`` describes (the first matching operator)."""
    if isinstance(node, ast.UnaryOp):
        _DropNot(node).visit(tree)
    elif isinstance(node, ast.Compare):
        before = change.split(" -> ")[0]
        for i, op in enumerate(node.ops):
            if type(op).__name__ == before:
                node.ops[i] = _COMPARE_SWAP[type(op)]()
                return
    elif isinstance(node, ast.BoolOp):
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    elif isinstance(node, ast.BinOp):
        node.op = _BINOP_SWAP[type(node.op)]()
    elif isinstance(node, ast.Constant):
        node.value = _moved(node.value)


def mutants(target: Target) -> list[Mutant]:
    """Every mutant of ``target``, in source order."""
    tree = ast.parse((ROOT / target.module).read_text(encoding="utf-8"))
    found = []
    for function in _functions(tree, target.functions):
        body = function.body[1:] if ast.get_docstring(function) else function.body
        for statement in body:
            for node, change in _points(statement):
                found.append((function.name, getattr(node, "lineno", function.lineno), change))
    return [
        Mutant(target.name, name, line, change, i)
        for i, (name, line, change) in enumerate(sorted(found, key=lambda f: f[1]))
    ]


def mutated_source(target: Target, mutant: Mutant) -> str:
    """The module's source with ``mutant`` applied (the same enumeration as ``mutants``)."""
    tree = ast.parse((ROOT / target.module).read_text(encoding="utf-8"))
    points = []
    for function in _functions(tree, target.functions):
        body = function.body[1:] if ast.get_docstring(function) else function.body
        for statement in body:
            for node, change in _points(statement):
                points.append((getattr(node, "lineno", function.lineno), node, change))
    points.sort(key=lambda p: p[0])
    _, node, change = points[mutant.index]
    _apply(tree, node, change)
    return ast.unparse(tree)


def _pytest(src: Path, target: Target, timeout_s: float) -> str:
    """``passed``, ``failed`` or ``timeout`` for the target's tests, ``src`` first on the path."""
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONDONTWRITEBYTECODE": "1"}
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-x",
        "-m",
        "not slow",
        "-p",
        "no:cacheprovider",
    ]
    try:
        done = subprocess.run(
            [*command, *(["-k", target.select] if target.select else []), *target.tests],
            cwd=ROOT,
            env=env,
            capture_output=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return "timeout"
    return "passed" if done.returncode == 0 else "failed"


def sample(found: list[Mutant], limit: int | None) -> list[Mutant]:
    """At most ``limit`` of ``found``, spread evenly over the source (None: all)."""
    if limit is None or len(found) <= limit:
        return found
    step = len(found) / limit
    return [found[int(i * step)] for i in range(limit)]


def run(targets: list[Target], timeout_s: float, limit: int | None) -> list[dict[str, object]]:
    """The mutants of ``targets`` (``limit`` per target): each outcome, as dicts."""
    results: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="gapscope-mutate-") as tmp:
        src = Path(tmp) / "src"
        shutil.copytree(ROOT / "src", src)
        for target in targets:
            if _pytest(src, target, timeout_s) != "passed":
                raise SystemExit(f"{target.name}: its tests fail unmutated; fix them first")
            module = src / Path(target.module).relative_to("src")
            original = module.read_text(encoding="utf-8")
            try:
                for mutant in sample(mutants(target), limit):
                    module.write_text(mutated_source(target, mutant), encoding="utf-8")
                    start = time.monotonic()
                    verdict = _pytest(src, target, timeout_s)
                    outcome = "survived" if verdict == "passed" else "killed"
                    row = {**asdict(mutant), "outcome": outcome, "tests": verdict}
                    row["seconds"] = round(time.monotonic() - start, 1)
                    results.append(row)
                    print(
                        f"{outcome:8s} {target.name}: {mutant.function} line {mutant.line}: "
                        f"{mutant.change}",
                        flush=True,
                    )
            finally:
                module.write_text(original, encoding="utf-8")
    return results


def report(results: list[dict[str, object]]) -> str:
    """Kill rate per target and overall, and every survivor."""
    lines = []
    names = list(dict.fromkeys(str(r["target"]) for r in results))
    for name in names:
        rows = [r for r in results if r["target"] == name]
        killed = sum(r["outcome"] == "killed" for r in rows)
        lines.append(f"{name}: {killed}/{len(rows)} killed")
    killed = sum(r["outcome"] == "killed" for r in results)
    if results:
        lines.append(
            f"overall: {killed}/{len(results)} killed ({100 * killed / len(results):.1f} %)"
        )
    for r in results:
        if r["outcome"] == "survived":
            lines.append(
                f"  survived: {r['target']}: {r['function']} line {r['line']}: {r['change']}"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="run only targets whose name contains this")
    parser.add_argument("--list", action="store_true", help="list the mutants and stop")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per test run")
    parser.add_argument("--json", type=Path, help="write every mutant's outcome here")
    parser.add_argument("--sample", type=int, help="at most this many mutants per target")
    args = parser.parse_args()
    targets = [t for t in TARGETS if not args.only or args.only.lower() in t.name.lower()]
    if not targets:
        raise SystemExit(f"no target matches {args.only!r}")
    if args.list:
        for target in targets:
            for m in mutants(target):
                print(f"{target.name}: {m.function} line {m.line}: {m.change}")
        return
    results = run(targets, args.timeout, args.sample)
    print(report(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
