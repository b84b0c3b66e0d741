"""`make bench` must not rot: every benchmark module imports and is run by `benchmarks/__main__`.

(bench_steer imported a function from the module it lived in before a refactoring and `make
bench` stopped at it; nothing in the test suite noticed.)
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

BENCHMARKS = Path(__file__).parent.parent / "benchmarks"


def test_every_benchmark_imports_and_is_run_by_make_bench() -> None:
    runner = importlib.import_module("benchmarks.__main__")
    listed = inspect.getsource(runner)
    names = sorted(p.stem for p in BENCHMARKS.glob("bench_*.py"))
    assert names, "no benchmark found"
    for name in names:
        module = importlib.import_module(f"benchmarks.{name}")
        assert callable(getattr(module, "main", None)), f"{name} has no main()"
        assert f"{name}.main" in listed, f"{name} is not run by make bench"
