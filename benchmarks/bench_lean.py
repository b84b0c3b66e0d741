"""Local Lean backend throughput: pooled REPL reuse vs a fresh REPL process per check.

Runs against the fake REPL (tests/lean/fake_repl.py), which sleeps ``IMPORT_DELAY_S`` when it
loads a header with ``import``; that stands in for Lean loading its imports, the cost pooling
exists to pay once. Both arms use the same workers and the same distinct, uncached checks.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from gapscope.lean.backend import CheckRequest
from gapscope.lean.local import LocalBackend

FAKE_REPL = Path(__file__).parent.parent / "tests" / "lean" / "fake_repl.py"
IMPORT_DELAY_S = 0.2


def _rate(project: Path, requests: list[CheckRequest], max_uses: int, workers: int) -> float:
    with LocalBackend(
        project,
        repl_command=(sys.executable, str(FAKE_REPL.resolve())),
        env={"FAKE_REPL_IMPORT_DELAY": str(IMPORT_DELAY_S)},
        max_workers=workers,
        max_uses=max_uses,
    ) as backend:
        start = time.perf_counter()
        verdicts = backend.check_many(requests)
        elapsed = time.perf_counter() - start
    assert all(v.valid for v in verdicts), [v for v in verdicts if not v.valid][:1]
    return len(requests) / elapsed


def main(n: int = 24, workers: int = 2) -> dict[str, Any]:
    """Measure checks/s both ways and print the result."""
    requests = [
        CheckRequest(f"theorem t{i} (n : Nat) : n + 0 = n := rfl", "import GapscopeNNG")
        for i in range(n)
    ]
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        pooled = _rate(project, requests, max_uses=1000, workers=workers)
        fresh = _rate(project, requests, max_uses=1, workers=workers)
    result = {
        "n": n,
        "workers": workers,
        "import_delay_s": IMPORT_DELAY_S,
        "pooled_checks_per_s": round(pooled, 1),
        "fresh_process_checks_per_s": round(fresh, 1),
        "speedup": round(pooled / fresh, 1),
    }
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
