"""A small mutation job over gapscope's scientific core: do the tests notice a wrong operator?

``make mutate`` (never part of ``make test``) runs it. For each target function below it makes
one mutant per mutation point - a comparison flipped (``<`` / ``<=``, ``==`` / ``!=``, ``in`` /
``not in``, ``is`` / ``is not``), ``and`` / ``or`` swapped, a ``not`` dropped, ``+`` / ``-`` and
``*`` / ``/`` swapped, a numeric constant moved by one, ``True`` / ``False`` swapped - and runs
the target's tests against it. A mutant is *killed* when a test fails (or the run exceeds its
time limit), *survived* when every test passes. The worktree is never edited: the sources are
copied to a temporary directory, the mutated module is written there, and pytest runs with
that copy first on the path, in a child forked from this process after it has imported the
tests' heavy third-party packages once (``PRELOAD``).

    python tools/mutate.py                 # every target, the report on stdout
    python tools/mutate.py --only bleu     # targets whose name contains "bleu"
    python tools/mutate.py --list          # the mutants, without running anything
    python tools/mutate.py --sample 12     # at most 12 mutants per target, spread evenly
    python tools/mutate.py --json out.json # also write every mutant's outcome

Mutation testing says where the tests are blind; a surviving mutant needs a test, or a
written reason why it is equivalent (it cannot change behaviour) in ``EQUIVALENT`` - see
docs/mutation.md. The job exits 1 while a survivor has neither.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import json
import os
import shutil
import signal
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
        (
            "tests/verify/test_sign_guard.py",
            "tests/verify/test_written_forms.py",
            "tests/verify/test_probe_threshold.py",
        ),
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
        (
            "_judge",
            "read_reports",
            "lean_rejection",
            "non_standard_axioms",
            "unestablished",
            "is_sorry_warning",
            "_after_code",
            "_is_query_error",
        ),
        (
            "tests/lean/test_soundness.py",
            "tests/lean/test_soundness_steps.py",
            "tests/lean/test_verdict_axioms.py",
        ),
    ),
    Target(
        "controls",
        "src/gapscope/stats/paired.py",
        ("mcnemar_exact",),
        ("tests/stats/test_mcnemar.py", "tests/analysis/test_compare.py"),
        "mcnemar",
    ),
    Target(
        "containment",
        "src/gapscope/ladder/containment.py",
        ("contains_token", "measure_containment", "has", "_number", "contains_paper", "contains"),
        ("tests/ladder/test_containment.py",),
        "not ladder_report",
    ),
    Target(
        "MATH normalisation",
        "src/gapscope/ladder/strip_string.py",
        ("strip_string", "_remove_right_units", "_fix_sqrt", "_fix_fracs", "_fix_a_slash_b"),
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

_ZIP_CHECKED = "the lengths are checked equal above, so zip's strict check never fires"
_WINDOW_LOOP = "while i < len(self.numbers) and self.numbers[i] < value + 1e-9:"
_WINDOW = (
    "the sorted-numbers window only bounds the scan: every number in it is still tested by"
    " abs(number - value) < 1e-9, so a wider window or a closed end finds the same numbers"
)
EQUIVALENT: dict[tuple[str, str, str], str] = {
    # (function, change, the mutated line as written): why the mutant cannot change a result
    ("sentence_bleu", "and <-> or", "if not hypothesis or not reference:"): (
        "sacrebleu scores an empty hypothesis or reference 0 under both configurations, so the"
        " guard only saves a call"
    ),
    (
        "mcnemar_exact",
        "True -> False",
        "only_a = sum(1 for x, y in zip(a, b, strict=True) if x and not y)",
    ): _ZIP_CHECKED,
    (
        "mcnemar_exact",
        "True -> False",
        "only_b = sum(1 for x, y in zip(a, b, strict=True) if y and not x)",
    ): _ZIP_CHECKED,
    (
        "quadrant_test",
        "True -> False",
        "hh = sum(1 for a, b in zip(x_high, y_high, strict=True) if a and b)",
    ): _ZIP_CHECKED,
    (
        "quadrant_test",
        "True -> False",
        "hl = sum(1 for a, b in zip(x_high, y_high, strict=True) if a and not b)",
    ): _ZIP_CHECKED,
    (
        "quadrant_test",
        "True -> False",
        "lh = sum(1 for a, b in zip(x_high, y_high, strict=True) if not a and b)",
    ): _ZIP_CHECKED,
    (
        "quadrant_test",
        "True -> False",
        "str(lab) for lab, a, b in zip(labels, x_high, y_high, strict=True) if not a and b",
    ): _ZIP_CHECKED,
    ("has", "1e-09 -> 1.000000001", "i = bisect.bisect_left(self.numbers, value - 1e-9)"): (
        _WINDOW
    ),
    ("has", "Lt -> LtE", _WINDOW_LOOP): _WINDOW,
    (
        "measure_containment",
        "True -> False",
        "for name, member in zip(SUBSETS, (True, novel, alone, not alone), strict=True):",
    ): "both sides are four long as written, so zip's strict check never fires",
    ("has", "1e-09 -> 1.000000001", _WINDOW_LOOP): _WINDOW,
    (
        "_probe",
        "20 -> 21",
        "va, vg = number(a.xreplace(point), 20), number(g.xreplace(point), 20)",
    ): (
        "number() rounds to that many significant digits and hands back a double (53 bits,"
        " under 17 digits), so 20 and 21 give the same double but for a last-ulp double"
        " rounding, 1e-16 relative, against close()'s 1e-10 tolerance; probed on overflowing,"
        " cancelling, huge and tiny values (exp(exp(36)), sin(10^40), e^(pi sqrt 163) - 640320^3"
        " - 744, 10^-25, gamma(400)): identical results"
    ),
}
"""The surviving mutants that are equivalent, each with its reason (docs/mutation.md); a
survivor not here needs a test, and makes the job exit 1."""

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
    source: str
    """The mutated line as written (stripped): with ``function`` and ``change`` it is the key
    of a written reason in ``EQUIVALENT``, which a line number would not stay."""

    @property
    def reason(self) -> str | None:
        """Why this mutant cannot change a result, where one is written down."""
        return EQUIVALENT.get((self.function, self.change, self.source))


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
    text = (ROOT / target.module).read_text(encoding="utf-8")
    lines = text.splitlines()
    tree = ast.parse(text)
    found = []
    for function in _functions(tree, target.functions):
        body = function.body[1:] if ast.get_docstring(function) else function.body
        for statement in body:
            for node, change in _points(statement):
                found.append((function.name, getattr(node, "lineno", function.lineno), change))
    return [
        Mutant(target.name, name, line, change, i, lines[line - 1].strip())
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


PRELOAD = (
    "pytest",
    "numpy",
    "scipy.stats",
    "sympy",
    "hypothesis",
    "typer",
    "inspect_ai",
    "sacrebleu",
)
"""Third-party packages the target tests import, imported once by this process before it
forks a test run per mutant: each run then pays only for gapscope's own modules, which it
imports afresh from the mutated copy (the parent never imports gapscope)."""


def _preload() -> None:
    """Import ``PRELOAD`` where installed (a missing one is only slower)."""
    for name in PRELOAD:
        try:
            __import__(name)
        except ImportError:
            continue


def _pytest_args(target: Target) -> list[str]:
    """pytest's arguments for ``target``'s fast tests, quiet, stopping at the first failure."""
    select = ["-k", target.select] if target.select else []
    return ["-q", "-x", "-m", "not slow", "-p", "no:cacheprovider", *select, *target.tests]


def _pytest(src: Path, target: Target, timeout_s: float) -> str:
    """``passed``, ``failed`` or ``timeout`` for the target's tests, ``src`` first on the path,
    run in a forked child (so gapscope is imported from ``src``, never from the worktree).
    The child leads its own process group, so a run past its time limit is ended with every
    process it started (the verifier's worker pool)."""
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 3
        try:
            os.setpgid(0, 0)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            os.chdir(ROOT)
            os.environ["PYTHONPATH"] = str(src)
            sys.path.insert(0, str(src))
            sys.dont_write_bytecode = True
            import pytest

            code = int(pytest.main(_pytest_args(target)))
        finally:
            os._exit(code)
    with contextlib.suppress(OSError):  # the child may have set it already
        os.setpgid(pid, pid)
    deadline = time.monotonic() + timeout_s
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return "passed" if os.waitstatus_to_exitcode(status) == 0 else "failed"
        if time.monotonic() > deadline:
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return "timeout"
        time.sleep(0.05)


def sample(found: list[Mutant], limit: int | None) -> list[Mutant]:
    """At most ``limit`` of ``found``, spread evenly over the source (None: all)."""
    if limit is None or len(found) <= limit:
        return found
    step = len(found) / limit
    return [found[int(i * step)] for i in range(limit)]


def run(targets: list[Target], timeout_s: float, limit: int | None) -> list[dict[str, object]]:
    """The mutants of ``targets`` (``limit`` per target): each outcome, as dicts."""
    results: list[dict[str, object]] = []
    _preload()
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
                    if outcome == "survived" and mutant.reason:
                        outcome = "equivalent"
                    row = {**asdict(mutant), "outcome": outcome, "tests": verdict}
                    row["seconds"] = round(time.monotonic() - start, 1)
                    results.append(row)
                    print(
                        f"{outcome:10s} {target.name}: {mutant.function} line {mutant.line}: "
                        f"{mutant.change}",
                        flush=True,
                    )
            finally:
                module.write_text(original, encoding="utf-8")
    return results


def report(results: list[dict[str, object]]) -> str:
    """Kill rate per target and overall; every survivor, with its written reason if it has
    one (an equivalent mutant) and flagged if it has none (it needs a test)."""

    def rate(rows: list[dict[str, object]]) -> str:
        killed = sum(r["outcome"] == "killed" for r in rows)
        equivalent = sum(r["outcome"] == "equivalent" for r in rows)
        survived = len(rows) - killed - equivalent
        return (
            f"{killed}/{len(rows)} killed ({100 * killed / len(rows):.1f} %), "
            f"{equivalent} equivalent, {survived} survived"
        )

    names = list(dict.fromkeys(str(r["target"]) for r in results))
    lines = [f"{name}: {rate([r for r in results if r['target'] == name])}" for name in names]
    if results:
        lines.append(f"overall: {rate(results)}")
    for r in results:
        if r["outcome"] != "killed":
            where = f"{r['target']}: {r['function']} line {r['line']}: {r['change']}"
            why = EQUIVALENT.get((str(r["function"]), str(r["change"]), str(r["source"])))
            lines.append(f"  {r['outcome']}: {where}" + (f" - {why}" if why else " (no test)"))
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
    if any(r["outcome"] == "survived" for r in results):
        raise SystemExit(1)  # a survivor without a test or a written reason


if __name__ == "__main__":
    main()
