"""Isolation: timeouts on pathological input cost one worker, cache hits, order, lazy start."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

from gapscope.verify import Verifier
from gapscope.verify.pool import TaskPool
from tests.verify.pool_tasks import pid_after

# Not caught by the input bounds (symbolic base), and sympy cannot expand it in seconds.
SLOW = "\\boxed{(1+x)^{(1+x)^{(1+x)^{100}}}}"


def test_timeout_costs_one_worker_and_the_pool_recovers() -> None:
    with Verifier(timeout_s=1.0, workers=2) as verifier:
        start = time.monotonic()
        verdicts = verifier.check_many(
            [(SLOW, "2"), *[(f"\\boxed{{{n}+x}}", f"x+{n}") for n in range(6)]]
        )
        assert time.monotonic() - start < 30
        assert (verdicts[0].label, verdicts[0].reason) == ("NOT_ACCEPT", "timeout")
        assert all(v.accepted for v in verdicts[1:])
        assert verifier.recycles == 1  # the one late worker, not the whole pool
        assert verifier.check("\\boxed{\\sqrt{2}\\cdot\\sqrt{2}}", "2").accepted


def test_pool_starts_only_when_a_pair_needs_it() -> None:
    verifier = Verifier(timeout_s=10.0, workers=1)
    try:
        assert verifier.check("\\boxed{\\frac{1}{2}}", "0.5").accepted
        assert verifier.check("The answer is 7.", "8").label == "NOT_ACCEPT"
        assert not verifier.pool_started
        assert verifier.check("\\boxed{x^2-1}", "(x-1)(x+1)").accepted
        assert verifier.pool_started
    finally:
        verifier.close()


def test_deep_nesting_is_not_accepted(verifier: Verifier) -> None:
    deep = "(" * 10_000 + "1" + ")" * 10_000
    verdict = verifier.check(f"\\boxed{{{deep}}}", "1", "NUMBER")
    assert verdict.label == "NOT_ACCEPT"
    assert verdict.reason in ("too_complex", "too_large")
    assert verifier.check("\\boxed{x^2-1}", "(x-1)(x+1)", "EXPR").accepted


def test_cache_hits(verifier: Verifier) -> None:
    verifier.cache_clear()
    first = verifier.check("\\boxed{(x+1)^2}", "x^2+2x+1")
    again = verifier.check("ignored reasoning \\boxed{(x+1)^2}", "x^2+2x+1")
    info = verifier.cache_info()
    assert first == again
    assert (info.hits, info.misses) == (1, 1)


def test_check_many_preserves_order(verifier: Verifier) -> None:
    items = [(f"\\boxed{{{n}}}", str(n if n % 3 else n + 1)) for n in range(1, 13)]
    items += [("\\boxed{\\sin^2 x+\\cos^2 x}", "1"), ("no box", "1"), ("\\boxed{x}", "2x")]
    labels = [v.label for v in verifier.check_many(items)]
    expected = ["NOT_ACCEPT" if n % 3 == 0 else "ACCEPT" for n in range(1, 13)]
    assert labels == [*expected, "ACCEPT", "NOT_ACCEPT", "NOT_ACCEPT"]


def test_check_each_emits_fast_verdicts_before_slow_ones_finish() -> None:
    """Streaming: the verdicts before a slow pair are handed out before it is decided."""
    seen: list[tuple[float, str]] = []
    with Verifier(timeout_s=1.5, workers=1) as verifier:
        start = time.monotonic()
        verifier.check_each(
            [("\\boxed{1}", "1"), ("\\boxed{2}", "3"), (SLOW, "2"), ("\\boxed{4}", "4")],
            lambda v: seen.append((time.monotonic() - start, v.reason)),
        )
    assert [r for _, r in seen] == ["string_match", "mismatch", "timeout", "string_match"]
    assert seen[1][0] < 1.0 <= seen[2][0]


def test_a_late_task_kills_its_worker_only() -> None:
    """The other worker keeps its process (and its warm imports) across a timeout."""
    pool: TaskPool[int] = TaskPool(pid_after, workers=2, memory_mb=None)
    try:
        before = set(pool.run([(0.3,), (0.3,), (0.3,), (0.3,)], 10.0, -1))
        assert len(before) == 2
        assert pool.run([(60.0,), (0.0,)], 1.0, -1)[0] == -1
        after = set(pool.run([(0.3,), (0.3,), (0.3,), (0.3,)], 10.0, -1))
        assert len(before & after) == 1 and pool.recycles == 1
    finally:
        pool.close()


def test_threads_share_one_verifier(verifier: Verifier) -> None:
    """Inspect scores samples from several threads at once: each gets its own verdict."""
    # symbolic pairs: they go through the shared worker pool, not the fast path
    pairs = [(f"\\boxed{{(x+{n})^2}}", f"x^2+{2 * n}x+{n * n + 1 - n % 2}") for n in range(12)]
    with ThreadPoolExecutor(max_workers=4) as threads:
        verdicts = list(threads.map(lambda p: verifier.check(*p), pairs))
    assert [v.accepted for v in verdicts] == [n % 2 == 1 for n in range(12)]
