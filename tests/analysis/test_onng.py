"""Statistics against hand-computed values."""

from __future__ import annotations

import pytest
from scipy import stats

from gapscope.analysis.onng import Record, summarize


def _rec(lam: float, correct: bool, seconds: float, tokens: int | None = 10) -> Record:
    return Record("m", f"p{seconds}", "mod", lam, correct, "valid", "ok", seconds, tokens)


def test_anova_and_kruskal_by_hand() -> None:
    # latencies: lambda 0 -> 1, 2, 3 and lambda 1 -> 4, 5, 6.
    # ANOVA: SSB = 3(2-3.5)^2 + 3(5-3.5)^2 = 13.5 (df 1), SSW = 2 + 2 = 4 (df 4): F = 13.5.
    # Kruskal: rank sums 6 and 15, H = 12/(6*7) (36/3 + 225/3) - 3*7 = 27/7.
    records = [_rec(0.0, True, s) for s in (1, 2, 3)] + [_rec(1.0, s == 4, s) for s in (4, 5, 6)]
    m = summarize(records).to_dict()["models"]["m"]
    latency = m["tests"]["inference_s"]
    assert latency["anova"]["statistic"] == pytest.approx(13.5)
    assert latency["anova"]["p_value"] == pytest.approx(stats.f.sf(13.5, 1, 4))
    assert latency["kruskal"]["statistic"] == pytest.approx(27 / 7)
    assert latency["kruskal"]["p_value"] == pytest.approx(stats.chi2.sf(27 / 7, 1))
    assert m["curve"] == [(0.0, 1.0), (1.0, pytest.approx(1 / 3))]
    row = m["by_lam"][1]
    assert row["n"] == 3 and row["mean_inference_s"] == pytest.approx(5.0)
    # correctness 1,1,1 vs 1,0,0: F = SSB/(SSW/4) with SSB = 3(1-2/3)^2 + 3(1/3-2/3)^2 = 2/3,
    # SSW = 0 + 2/3 -> F = (2/3) / (1/6) = 4.
    assert m["tests"]["correct"]["anova"]["statistic"] == pytest.approx(4.0)


def test_undefined_tests_are_none() -> None:
    records = [_rec(0.0, True, 1.0), _rec(0.5, True, 1.0)]
    tests = summarize(records).to_dict()["models"]["m"]["tests"]
    assert tests["correct"] == {"anova": None, "kruskal": None}
    only_one_lambda = summarize([_rec(0.0, True, 1.0), _rec(0.0, False, 2.0)])
    assert only_one_lambda.to_dict()["models"]["m"]["tests"]["inference_s"]["anova"] is None


def test_missing_tokens_are_skipped() -> None:
    records = [_rec(0.0, True, 1.0, None), _rec(0.0, True, 2.0, 30)]
    row = summarize(records).to_dict()["models"]["m"]["by_lam"][0]
    assert row["mean_output_tokens"] == 30


def test_verdicts_are_counted_per_lambda() -> None:
    records = [
        _rec(0.0, True, 1.0),
        Record("m", "p2", "mod", 0.0, False, "disallowed_tactic", "ok", 1.0, 5),
        Record("m", "p3", "mod", 0.0, False, None, "no_json", 1.0, 5),
    ]
    row = summarize(records).to_dict()["models"]["m"]["by_lam"][0]
    assert row["verdicts"] == {"disallowed_tactic": 1, "unchecked": 1, "valid": 1}
