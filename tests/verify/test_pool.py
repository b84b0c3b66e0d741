"""Isolation: timeouts on pathological input, pool recycling, cache hits, order."""

from __future__ import annotations

import time

from gapscope.verify import Verifier


def test_pathological_power_times_out_and_pool_recovers() -> None:
    with Verifier(timeout_s=2.0, workers=1) as verifier:
        start = time.monotonic()
        verdict = verifier.check("\\boxed{9^{9^{9^{9}}}}", "1", "NUMBER")
        assert time.monotonic() - start < 15
        assert (verdict.label, verdict.reason) == ("NOT_ACCEPT", "timeout")
        assert verifier.recycles >= 1
        assert verifier.check("\\boxed{\\sqrt{2}\\cdot\\sqrt{2}}", "2").accepted


def test_deep_nesting_is_not_accepted(verifier: Verifier) -> None:
    deep = "(" * 10_000 + "1" + ")" * 10_000
    start = time.monotonic()
    verdict = verifier.check(f"\\boxed{{{deep}}}", "1", "NUMBER")
    assert time.monotonic() - start < 15
    assert verdict.label == "NOT_ACCEPT"
    assert verdict.reason in ("timeout", "parse_error")
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
