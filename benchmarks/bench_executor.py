"""Lean executors: checks/s of the local REPL pool vs 1 and 2 Ray actors, as ratios.

Every check costs ``CHECK_DELAY_S`` on the fake REPL (tests/t2/fake_lean.py), standing in for
Lean elaborating a proof. The local pool runs ``LOCAL_WORKERS`` REPLs; each Ray actor owns one
REPL. Start-up (Ray, actors, header loads) is paid before the clock starts, since it is paid
once per run, and the same distinct, uncached checks are timed in every arm. On a single
machine Ray can only add overhead; its point is more machines, which this run cannot show.

Targets: two actors at least ``MIN_SCALING`` times one actor's checks/s (the checks spread;
each is a sleep, so two cores are not the limit), and one actor at least ``MIN_VS_LOCAL`` of
the local pool's rate per worker (the Ray round trip must stay small beside a check). Without
Ray installed it returns a visible ``SKIPPED`` that ``make bench`` counts.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.targets import Skipped, Target, skipped
from gapscope.lean import RayOptions, open_checker
from gapscope.lean.backend import CheckRequest, LeanBackend

FAKE_LEAN = Path(__file__).parent.parent / "tests" / "t2" / "fake_lean.py"
CHECK_DELAY_S = 0.2
LOCAL_WORKERS = 2
MIN_SCALING = 1.6
MIN_VS_LOCAL = 0.8


def _options(workers: int) -> dict[str, Any]:
    """The fake REPL, run untested: it is not Lean, so it cannot pass the self-test that
    ``open_backend`` asks of a real installation (tests/conftest.py opens the gate the same way)."""
    return {
        "allow_untested": True,
        "repl_command": (sys.executable, str(FAKE_LEAN.resolve())),
        "env": {"FAKE_LEAN_CHECK_DELAY": str(CHECK_DELAY_S)},
        "max_workers": workers,
    }


def _rate(checker: LeanBackend, n: int, tag: str, warm: int) -> float:
    with_header = "import Mathlib"
    checker.check_many(
        [CheckRequest(f"theorem w{i}_{tag} : True := trivial", with_header) for i in range(warm)]
    )
    requests = [
        CheckRequest(f"theorem t{i}_{tag} : True := trivial", with_header) for i in range(n)
    ]
    start = time.perf_counter()
    verdicts = checker.check_many(requests)
    elapsed = time.perf_counter() - start
    assert all(v.valid for v in verdicts), [v for v in verdicts if not v.valid][:1]
    return n / elapsed


def main(n: int = 20) -> list[Target | Skipped]:
    """Measure checks/s in the three arms, print them with ratios to the local pool, and
    return the targets."""
    try:
        import ray
    except ImportError:
        return [skipped("Ray executors", "ray is not installed (pip install 'gapscope[ray]')")]
    with tempfile.TemporaryDirectory() as tmp:
        spec = f"local:{tmp}"
        with open_checker(spec, **_options(LOCAL_WORKERS)) as local:
            local_rate = _rate(local, n, "local", LOCAL_WORKERS)
        started = not ray.is_initialized()
        if started:
            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        rates = {}
        for actors in (1, 2):
            options = RayOptions(actors=actors)
            with open_checker(spec, executor="ray", ray=options, **_options(1)) as remote:
                rates[actors] = _rate(remote, n, f"ray{actors}", actors)
        if started:
            ray.shutdown()
    result = {
        "checks": n,
        "check_delay_s": CHECK_DELAY_S,
        "local_pool_workers": LOCAL_WORKERS,
        "local_checks_per_s": round(local_rate, 2),
        "ray_1_actor_checks_per_s": round(rates[1], 2),
        "ray_2_actors_checks_per_s": round(rates[2], 2),
        "ray_1_actor_vs_local": round(rates[1] / local_rate, 2),
        "ray_2_actors_vs_local": round(rates[2] / local_rate, 2),
    }
    print(json.dumps(result, indent=2))
    per_worker = local_rate / LOCAL_WORKERS
    return [
        Target("Ray: 2 actors / 1 actor checks/s", rates[2] / rates[1], MIN_SCALING),
        Target("Ray: 1 actor / one local worker", rates[1] / per_worker, MIN_VS_LOCAL),
    ]


if __name__ == "__main__":
    main()
