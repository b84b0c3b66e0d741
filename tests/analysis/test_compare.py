"""Paired comparisons: exact McNemar, bootstrap CI, Holm, refusal of mismatched items."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from gapscope.analysis.compare import ComparisonError, compare_runs
from gapscope.analysis.diagnostics import LoadedLog, load
from gapscope.analysis.s2b import S2BRunSummary
from gapscope.analysis.table import reader
from gapscope.stats.paired import holm, mcnemar_exact, paired_bootstrap_difference


def test_mcnemar_exact_by_hand() -> None:
    # b = 1 (A only), c = 5 (B only): p = 2 * (C(6,0) + C(6,1)) / 2^6 = 14/64
    a = [True, False, False, False, False, False, True]
    b = [False, True, True, True, True, True, True]
    result = mcnemar_exact(a, b)
    assert (result.b, result.c, result.n) == (1, 5, 7)
    assert result.p_value == pytest.approx(14 / 64)
    none = mcnemar_exact([True, False], [True, False])  # nothing discordant
    assert (none.n, none.b, none.c, none.p_value) == (2, 0, 0, 1.0)
    assert mcnemar_exact([True, False], [False, True]).p_value == 1.0  # 2 * 3/4, capped at 1
    with pytest.raises(ValueError, match="equal length"):
        mcnemar_exact([True], [True, False])


def test_holm_by_hand() -> None:
    # sorted 0.01, 0.02, 0.04 -> 0.03, 0.04, 0.04 (monotone), back in input order
    assert holm([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])
    assert holm([0.6, 0.5]) == pytest.approx([1.0, 1.0])


def test_paired_bootstrap_keeps_the_pairs() -> None:
    same = [True, False, True, True]
    ci = paired_bootstrap_difference(same, same, n_resamples=500, rng=np.random.default_rng(0))
    assert (ci.estimate, ci.low, ci.high) == (0.0, 0.0, 0.0)  # paired: no spread at all
    better = paired_bootstrap_difference(
        [True] * 30, [False] * 10 + [True] * 20, n_resamples=2000, rng=np.random.default_rng(0)
    )
    assert better.estimate == pytest.approx(1 / 3)
    assert 0.0 < better.low < better.estimate < better.high <= 1.0


def test_rule_vs_random_listener_is_significant_on_s2b(logs: dict[str, Path]) -> None:
    result = compare_runs([load(logs["rule"])], [load(logs["random"])])
    (metric,) = result.metrics
    assert metric.metric == "ZSCT [cat-10shot]" and metric.mcnemar.n == 6 * 54
    assert metric.mcnemar.p_value < 0.001
    assert metric.difference.low > 0  # the rule listener is better
    assert result.a == "rule listener" and result.b == "random listener"


def _random_listener(coin_seed: int, truth: list[bool]) -> S2BRunSummary:
    """A coin-flip listener's per-query outcomes on fixed items, as its log would give them."""
    coin = random.Random(coin_seed)
    query = {f"seed-0/game-{i}": (coin.random() < 0.5) == same for i, same in enumerate(truth)}
    return S2BRunSummary("cat-10shot", "random", "none/none", "x.eval", "success", [], {}, query)


def test_random_vs_random_false_positives_near_nominal_over_many_seeds() -> None:
    """Different coin seeds on the same 60 items: H0 holds, so p < 0.05 about 5% of the time
    (exact McNemar is slightly conservative, never liberal)."""
    truth = [random.Random(7).random() < 0.5 for _ in range(60)]
    s2b = reader("s2b_lm")
    trials, hits = 400, 0
    for seed in range(trials):
        a = LoadedLog(Path("a.eval"), s2b, _random_listener(2 * seed, truth))
        b = LoadedLog(Path("b.eval"), s2b, _random_listener(2 * seed + 1, truth))
        (metric,) = compare_runs([a], [b], n_resamples=200).metrics
        hits += metric.mcnemar.p_value < 0.05
    assert 0.01 <= hits / trials <= 0.075


def test_mismatched_items_are_refused_with_the_count(logs: dict[str, Path]) -> None:
    s2b = reader("s2b_lm")
    a = LoadedLog(Path("a.eval"), s2b, _random_listener(1, [True] * 10))
    short = _random_listener(2, [True] * 7)
    b = LoadedLog(Path("b.eval"), s2b, short)
    with pytest.raises(ComparisonError, match="3 items only in A, 0 only in B, 7 in both"):
        compare_runs([a], [b])
    result = compare_runs([a], [b], intersect=True)
    assert result.metrics[0].mcnemar.n == 7
    assert any("common items only" in note for note in result.notes)
    with pytest.raises(ComparisonError, match="share no diagnostic"):
        compare_runs([a], [load(logs["ladder"])])


def test_compare_cli_json_envelope(logs: dict[str, Path]) -> None:
    from gapscope.app.main import app

    result = CliRunner().invoke(
        app, ["compare", str(logs["rule"].parent), str(logs["random"]), "--json"]
    )
    assert result.exit_code == 0, result.output
    envelope = json.loads(result.stdout)
    assert envelope["command"] == "compare" and envelope["status"] == "ok"
    assert len(envelope["logs"]) == 2
    (metric,) = envelope["details"]["metrics"]
    assert metric["p_mcnemar"] < 0.001 and metric["p_holm"] == metric["p_mcnemar"]
    assert {r["model"] for r in envelope["summary"]} == {"rule listener", "random listener"}
    ladder = CliRunner().invoke(app, ["compare", str(logs["ladder"]), str(logs["ladder"])])
    assert ladder.exit_code == 0, ladder.output
    assert "transitions" in ladder.output


def _fixed(outcomes: list[bool], listener: str) -> S2BRunSummary:
    query = {f"seed-0/game-{i}": ok for i, ok in enumerate(outcomes)}
    return S2BRunSummary("cat-10shot", listener, "none/none", "x.eval", "success", [], {}, query)


def test_a_bootstrap_ci_that_excludes_zero_on_few_items_defers_to_the_exact_test() -> None:
    """n = 6, A right on 3 items B gets wrong: the percentile bootstrap excludes 0 (a resample
    without a discordant pair has chance 1/64), exact McNemar gives p = 2 / 2^3 = 0.25."""
    s2b = reader("s2b_lm")
    a = LoadedLog(Path("a.eval"), s2b, _fixed([True] * 3 + [False] * 3, "rule"))
    b = LoadedLog(Path("b.eval"), s2b, _fixed([False] * 6, "random"))
    result = compare_runs([a], [b], n_resamples=4000)
    (metric,) = result.metrics
    assert metric.mcnemar.p_value == pytest.approx(0.25) and metric.difference.low > 0
    (note,) = [n for n in result.notes if "exact McNemar" in n]
    assert "p = 0.25 on n = 6 paired items (3 discordant)" in note
    assert note.endswith("trust the exact test")


def test_metrics_only_one_side_has_are_one_note_per_side(logs: dict[str, Path]) -> None:
    s2b = reader("s2b_lm")
    a = LoadedLog(Path("a.eval"), s2b, _fixed([True, False], "rule"))
    b = LoadedLog(Path("b.eval"), s2b, _fixed([True, True], "random"))
    other = _fixed([True], "rule")
    other_preset = S2BRunSummary(
        "demo", "rule", "none/none", "y.eval", "success", [], {}, other.query
    )
    extra = LoadedLog(Path("c.eval"), s2b, other_preset)
    result = compare_runs([a, extra], [b])
    alone = [n for n in result.notes if n.startswith("only in")]
    assert alone == ["only in A, not compared (1): S2B-LM ZSCT [demo]"]


def test_a_difference_over_one_item_has_no_interval() -> None:
    one = paired_bootstrap_difference(
        [True], [False], n_resamples=100, rng=np.random.default_rng(0)
    )
    assert one.estimate == 1.0 and one.low is None and one.high is None
    assert one.text() == "+100.0 (n = 1, no CI)"
    two = paired_bootstrap_difference(
        [True, False], [False, False], n_resamples=200, rng=np.random.default_rng(0)
    )
    assert two.low is not None and two.text().startswith("+50.0 [")
