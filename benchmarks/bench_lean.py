"""Local Lean backend throughput: pooled REPL reuse vs a fresh REPL process per check.

Both arms run the fake REPL (tests/lean/fake_repl.py) as real processes: it speaks the REPL's
JSON protocol and elaborates each check with ``fake_elab``, and every process is started the
way a Lean REPL is (sandboxed where bubblewrap works, with its environment allow-list). No
import cost is simulated: the baseline (one process per check, ``max_uses=1``) pays what a
fresh REPL really costs here - start-up, handshake and header - and the pool pays it once per
worker. The speed-up is therefore measured, not set; with real Lean, whose header loads Mathlib
for seconds, it is larger, so this is its lower bound. Same workers, same distinct uncached
checks in both arms.

Target: the pool checks at least ``MIN_SPEEDUP`` times as fast as a process per check (6.7 on
the development machine, 2 cores under load).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.targets import Target
from gapscope.lean.backend import CheckRequest
from gapscope.lean.local import LocalBackend

FAKE_REPL = Path(__file__).parent.parent / "tests" / "lean" / "fake_repl.py"
MIN_SPEEDUP = 3.0


def _rate(project: Path, requests: list[CheckRequest], max_uses: int, workers: int) -> float:
    with LocalBackend(
        project,
        repl_command=(sys.executable, str(FAKE_REPL.resolve())),
        max_workers=workers,
        max_uses=max_uses,
    ) as backend:
        start = time.perf_counter()
        verdicts = backend.check_many(requests)
        elapsed = time.perf_counter() - start
    assert all(v.valid for v in verdicts), [v for v in verdicts if not v.valid][:1]
    return len(requests) / elapsed


def main(n: int = 24, workers: int = 2) -> list[Target]:
    """Measure checks/s both ways, print them, and return the speed-up target."""
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
        "pooled_checks_per_s": round(pooled, 1),
        "fresh_process_checks_per_s": round(fresh, 1),
        "speedup": round(pooled / fresh, 1),
    }
    print(json.dumps(result, indent=2))
    return [Target("Lean pool vs a REPL process per check", pooled / fresh, MIN_SPEEDUP)]


if __name__ == "__main__":
    main()
