"""Regenerate ``fixtures/math_verify_cases.jsonl`` from a checkout of huggingface/Math-Verify.

Usage: ``python tests/verify/make_math_verify_cases.py PATH/TO/Math-Verify [OUT]``

Math-Verify's own tests are pytest functions whose cases sit in ``@pytest.mark.parametrize``
lists of (gold, prediction, expected[, option]) and that call a comparison helper with some
options (extraction targets, float precision, strictness). This script reads those files with
``ast`` (nothing is imported or executed), and writes one JSON line per case with its source
file, test name, gold, prediction, expected verdict and the options the test passed, so the
suite can be re-derived whenever Math-Verify changes. The cases are Math-Verify's data (MIT
licence, see the header of each file there); the reading code is ours.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path
from typing import Any

_GOLD_NAMES = ("gold",)
_PRED_NAMES = ("pred", "prediction")
_EXPECTED_NAMES = ("expected", "result")
_OPTION_NAMES = ("match_types", "precision", "strict", "allow_set_relation_comp")


def _parametrize(decorator: ast.expr) -> tuple[list[str], list[Any]] | None:
    """(argument names, case tuples) of a ``pytest.mark.parametrize`` decorator, else None."""
    if not (
        isinstance(decorator, ast.Call) and ast.unparse(decorator.func).endswith("parametrize")
    ):
        return None
    names_node, cases_node = decorator.args[:2]
    names = ast.literal_eval(names_node)
    names = [n.strip() for n in (names.split(",") if isinstance(names, str) else names)]
    try:
        cases = ast.literal_eval(cases_node)
    except ValueError:
        return None  # cases built from non-literals (configs, mocks): not gold/pred pairs
    return names, list(cases)


def _call_options(function: ast.FunctionDef) -> dict[str, ast.expr]:
    """Keyword arguments of the comparison call in the test body (literals or parameters)."""
    for node in ast.walk(function):
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "compare_strings":
            return {k.arg: k.value for k in node.keywords if k.arg in _OPTION_NAMES}
    return {}


def _option_value(node: ast.expr, case: dict[str, Any]) -> Any:
    if isinstance(node, ast.Name):
        return case[node.id]
    return ast.literal_eval(node)


def cases_in(path: Path) -> list[dict[str, Any]]:
    """Every gold/prediction case of one Math-Verify test file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[dict[str, Any]] = []
    for function in (n for n in tree.body if isinstance(n, ast.FunctionDef)):
        for decorator in function.decorator_list:
            parsed = _parametrize(decorator)
            if parsed is None:
                continue
            names, cases = parsed
            gold = next((n for n in names if n in _GOLD_NAMES), None)
            pred = next((n for n in names if n in _PRED_NAMES), None)
            expected = next((n for n in names if n in _EXPECTED_NAMES), None)
            if gold is None or pred is None or expected is None:
                continue
            options = _call_options(function)
            for index, values in enumerate(cases):
                case = dict(zip(names, values, strict=True))
                found.append(
                    {
                        "source": f"{path.name}::{function.name}[{index}]",
                        "gold": case[gold],
                        "prediction": case[pred],
                        "expected": bool(case[expected]),
                        "options": {k: _option_value(v, case) for k, v in options.items()},
                    }
                )
    return found


def main(argv: list[str]) -> int:
    """Write the fixture; print how many cases each file gave."""
    if not 2 <= len(argv) <= 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    tests = Path(argv[1]) / "tests"
    out = (
        Path(argv[2])
        if len(argv) == 3
        else Path(__file__).parent / "fixtures" / "math_verify_cases.jsonl"
    )
    if not tests.is_dir():
        print(f"error: {tests} is not a directory (give a Math-Verify checkout)", file=sys.stderr)
        return 2
    rows: list[dict[str, Any]] = []
    for path in sorted(tests.glob("test_*.py")):
        cases = cases_in(path)
        print(f"{path.name}: {len(cases)} cases", file=sys.stderr)
        rows += cases
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    print(f"{len(rows)} cases -> {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
