"""Metrics per context: rates, precision of compile as a predictor of TA, denominators."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gapscope.t2.contract import ScoredSample
from gapscope.t2.metrics import summarize, summarize_context
from gapscope.t2.rules import Rules


def _s(
    record: str,
    compiles: bool,
    ta: bool,
    *,
    context: str = "nl+st",
    outcome: str = "checked",
    strict: bool | None = None,
    graded: float | None = None,
    successors: int = 2,
    hard: bool = False,
) -> ScoredSample:
    return ScoredSample(
        record,
        context,
        outcome,
        compiles,
        ta,
        ta if strict is None else strict,
        (1.0 if ta else 0.0) if graded is None else graded,
        successors,
        hard,
    )


def test_rates_precision_and_exclusions() -> None:
    samples = [
        _s("a", True, True),
        _s("b", True, False, graded=0.5, successors=4),
        _s("c", True, True, strict=False),
        _s("d", False, False, outcome="renamed"),
        _s("e", False, False, outcome="server_error"),
        _s("a", True, False, context="none"),
    ]
    summary = summarize(samples, n_resamples=200)
    assert list(summary) == ["nl+st", "none"]
    main = summary["nl+st"]
    assert main["records"] == 4 and main["server_error_records"] == ["e"]
    assert main["outcomes"]["renamed"] == 1 and main["outcomes"]["server_error"] == 1
    assert main["compile"]["estimate"] == pytest.approx(3 / 4)
    assert main["ta"]["estimate"] == pytest.approx(2 / 4)
    assert main["ta_strict"]["estimate"] == pytest.approx(1 / 4)
    assert main["graded"]["estimate"] == pytest.approx((1 + 0.5 + 1 + 0) / 4)
    assert main["compile_precision"]["estimate"] == pytest.approx(2 / 3)
    assert 0.0 <= main["ta"]["low"] <= 0.5 <= main["ta"]["high"] <= 1.0
    assert main["ta_by_successors"] == [
        {"successors": 2, "samples": 3, "records": 3, "ta": 2 / 3, "graded": 2 / 3},
        {"successors": 4, "samples": 1, "records": 1, "ta": 0.0, "graded": 0.5},
    ]
    assert summary["none"]["ta"]["estimate"] == 0.0


def test_k_samples_of_a_record_are_averaged_first() -> None:
    samples = [_s("a", True, True), _s("a", True, False), _s("b", True, True)]
    main = summarize(samples, n_resamples=100)["nl+st"]
    assert main["ta"]["estimate"] == pytest.approx((0.5 + 1.0) / 2)
    assert main["compile_precision"]["estimate"] == pytest.approx(2 / 3)


def test_no_compiled_sample_has_no_precision() -> None:
    main = summarize([_s("a", False, False)], n_resamples=50)["nl+st"]
    assert main["compile_precision"] is None and main["compile"]["estimate"] == 0.0


def test_an_answer_that_broke_its_check_stays_in_every_denominator() -> None:
    samples = [_s("a", True, True), _s("b", False, False, outcome="broke_check")]
    main = summarize_context(samples, n_resamples=20)
    assert main["records"] == 2 and main["server_error_records"] == []
    assert main["ta"]["estimate"] == pytest.approx(1 / 2)
    assert main["outcomes"]["broke_check"] == 1


def test_only_server_errors_leave_no_rate() -> None:
    main = summarize([_s("a", False, False, outcome="server_error")])["nl+st"]
    assert main["ta"] is None and main["records"] == 0


def test_the_hard_subset_has_its_own_compile_and_ta() -> None:
    samples = [
        _s("a", True, True, hard=True),
        _s("a", False, False, hard=True),  # k = 2: record a compiles 1/2, passes TA 1/2
        _s("b", True, False, hard=True),
        _s("c", True, True),
        _s("d", False, False, hard=True, outcome="server_error"),
    ]
    main = summarize(samples, n_resamples=100)["nl+st"]
    assert main["hard"]["records"] == 2
    assert main["hard"]["compile"]["estimate"] == pytest.approx((0.5 + 1.0) / 2)
    assert main["hard"]["ta"]["estimate"] == pytest.approx((0.5 + 0.0) / 2)
    assert main["ta"]["estimate"] == pytest.approx((0.5 + 0.0 + 1.0) / 3)


NO_HARD_SUBSET = {"records": 0, "rows": 0, "compile": None, "ta": None, "compile_precision": None}
"""The Hard block of a context without a Hard record: counts of 0, every rate None."""


def test_no_hard_record_leaves_no_hard_rate() -> None:
    main = summarize([_s("a", True, True)], n_resamples=50)["nl+st"]
    assert main["hard"] == NO_HARD_SUBSET


def test_released_rules_pass_at_k_rows_and_failures() -> None:
    """Under the released rules: a record passes when any sample does (pass@k); every row of
    its id is in the denominator but only one has its result (the others fail); a server
    error fails; graded TA leaves out a record with no successor (no share to take), which
    the released rules keep."""
    samples = [
        _s("a", True, False),
        _s("a", True, True),  # k = 2: a passes (any)
        ScoredSample("b", "nl+st", "checked", True, False, False, 0.0, 2, rows=3),
        _s("c", False, False, outcome="server_error"),
        ScoredSample("d", "nl+st", "checked", True, True, True, None, 0),  # no successor
    ]
    released = summarize(samples, rules=Rules.T2, n_resamples=50)["nl+st"]
    assert released["rows"] == 6 and released["records"] == 4
    assert released["ta"]["estimate"] == pytest.approx(2 / 6)  # a, d of a, b, b', b'', c, d
    assert released["compile"]["estimate"] == pytest.approx(3 / 6)  # a, b, d
    assert released["compile_precision"]["estimate"] == pytest.approx(2 / 3)
    assert released["graded"]["estimate"] == pytest.approx(1 / 5)  # a 1, b 0 x3, c 0; not d
    by = {row["successors"]: row for row in released["ta_by_successors"]}
    assert by[0]["graded"] is None and by[0]["ta"] == 1.0
    ours = summarize(samples, n_resamples=50)["nl+st"]
    assert ours["rows"] == 3 and ours["ta"]["estimate"] == pytest.approx((0.5 + 0 + 1) / 3)


def test_precision_is_reported_for_the_hard_subset_too() -> None:
    """P(TA | compile) on the full set and on the Hard subset: 3 of 4 compiling answers pass
    TA overall, 1 of 3 among the theorems (the paper's 6.89 % is read as the Hard one)."""
    samples = [
        _s("a", True, True),
        _s("b", True, True),
        _s("h1", True, True, hard=True),
        _s("h2", True, False, hard=True),
        _s("h3", True, False, hard=True),
        _s("h4", False, False, hard=True),
    ]
    for rules in Rules:
        main = summarize(samples, rules=rules, n_resamples=50)["nl+st"]
        assert main["compile_precision"]["estimate"] == pytest.approx(3 / 5)
        assert main["hard"]["compile_precision"]["estimate"] == pytest.approx(1 / 3)


def test_buckets_use_the_rules_bleu_and_t2_text_metrics_sit_beside_them() -> None:
    """Under the released rules the buckets are made by the released BLEU (here 0 for every
    sample: one short answer has no 4-gram); T2's bleu_score and em_rate are per-record means
    of the per-sample means, whatever the rules."""
    samples = [
        replace(_s("a", True, True), bleu=100.0, bleu_t2=0.0, exact_match=True),
        replace(_s("a", True, False), bleu=50.0, bleu_t2=40.0, exact_match=False),
        replace(_s("b", True, False), bleu=95.0, bleu_t2=90.0, exact_match=False),
    ]
    ours = summarize(samples, n_resamples=20)["nl+st"]["bleu"]
    released = summarize(samples, rules=Rules.T2, n_resamples=20)["nl+st"]["bleu"]
    assert ours["metric"] == "sacrebleu" and "tok:13a" in ours["signature"]
    assert released["metric"] == "t2" and "tok:none|smooth:none" in released["signature"]
    assert [(b["bleu"], b["samples"]) for b in ours["by_bucket"]] == [("50-60", 1), ("90-100", 2)]
    assert [(b["bleu"], b["samples"]) for b in released["by_bucket"]] == [
        ("0-10", 1),
        ("40-50", 1),
        ("90-100", 1),
    ]
    for bleu in (ours, released):
        assert bleu["t2_bleu4"] == pytest.approx(((0 + 40) / 2 + 90) / 2)
        assert bleu["t2_exact_match"] == pytest.approx((1 / 2 + 0) / 2)


def test_an_empty_context_has_an_empty_hard_subset() -> None:
    main = summarize_context([], n_resamples=20)
    assert main["hard"] == NO_HARD_SUBSET
    assert main["bleu"]["t2_bleu4"] is None and main["compile_precision"] is None


def test_t2_text_metrics_need_both_scores_of_a_sample() -> None:
    """A sample with a BLEU but no exact match (a log cut short) is left out of both means."""
    samples = [
        replace(_s("a", True, True), bleu_t2=80.0, exact_match=True),
        replace(_s("b", True, True), bleu_t2=20.0, exact_match=None),
    ]
    bleu = summarize(samples, n_resamples=20)["nl+st"]["bleu"]
    assert bleu["t2_bleu4"] == 80.0 and bleu["t2_exact_match"] == 1.0


def test_graded_ta_counts_a_record_with_one_successor_and_none_without() -> None:
    """Graded TA is the share of successors that still compile: a record with a single
    successor has a share (0 or 1), a record with none has no share and leaves the rate."""
    samples = [
        _s("one", True, True, graded=1.0, successors=1),
        _s("none", True, True, graded=0.0, successors=0),
        _s("two", True, False, graded=0.0, successors=2),
    ]
    main = summarize(samples, n_resamples=50)["nl+st"]
    assert main["graded"]["estimate"] == pytest.approx((1.0 + 0.0) / 2)
    assert main["ta"]["estimate"] == pytest.approx(2 / 3)  # TA keeps every record
