"""Each diagnostic's one-line verdict under its headline in the report's first table: read
from what its summary computed, at chance whenever the interval covers chance, no gap named
on answers that are mostly format failures, a trend over lambda only where its test finds one;
a plugin that declares none gets the share of its headline's items that passed."""

from __future__ import annotations

from gapscope.analysis import ladder, onng, prove, s2b, t2
from gapscope.analysis.ladder import ModelRun, Rollout
from gapscope.analysis.onng import Record
from gapscope.analysis.profile import GapRow
from gapscope.analysis.prove import ProblemCounts, ProveRun
from gapscope.analysis.s2b import S2BRunSummary
from gapscope.analysis.share import ShareSummary, share_reader
from gapscope.analysis.spec import DiagnosticSpec, LogReader, outcome_verdict
from gapscope.analysis.t2 import T2Summary
from gapscope.ladder import Condition
from gapscope.prove import Coherence


def _listener(right: int, n: int, answers: dict[str, int]) -> S2BRunSummary:
    query = {f"seed-0/game-{i}": i < right for i in range(n)}
    return S2BRunSummary(
        "cat-10shot", "lm", "m", "x.eval", "success", [{"seed": 0}], {}, query, answers=answers
    )


def _s2b(summary: S2BRunSummary) -> str:
    return s2b.verdict(summary, summary.adjusted_row())


def test_s2b_is_at_chance_while_the_interval_covers_it() -> None:
    mixed = {"same": 30, "different": 30, "unparsed": 0}
    assert _s2b(_listener(60, 60, mixed)) == "above chance (CI excludes 0)"
    assert _s2b(_listener(37, 60, mixed)) == "at chance (CI covers 0)"  # 62 %, CI [49.0, ...]
    assert _s2b(_listener(38, 60, mixed)) == "above chance (CI excludes 0)"  # 63 %, [50.7, ...]
    assert _s2b(_listener(10, 60, mixed)) == "below chance (ZSCT's CI under 50 %)"
    zsct = _listener(60, 60, mixed).rows()[0]
    assert s2b.verdict(_listener(60, 60, mixed), zsct) == "above chance (CI excludes 50 %)"


def test_s2b_one_answer_to_every_game_is_chance_whatever_it_scores() -> None:
    # 45 of 54 query games were "different": answering it always scores 83 %, learns nothing
    constant = _listener(45, 54, {"same": 0, "different": 54, "unparsed": 0})
    assert constant.rows()[0].value is not None and constant.rows()[0].value > 80
    assert _s2b(constant) == "at chance: every answer 'different'"
    nothing = _listener(0, 54, {"same": 0, "different": 0, "unparsed": 54})
    assert _s2b(nothing) == "no answer parsed"


def _family(pid: str, c1: bool, c2: bool, c3: bool, milestones: list[bool]) -> list[Rollout]:
    rollouts = [
        Rollout(pid, condition, None, solved)
        for condition, solved in ((Condition.C1, c1), (Condition.C2, c2), (Condition.C3, c3))
    ]
    return rollouts + [Rollout(pid, Condition.S0, i, m) for i, m in enumerate(milestones)]


def _ladder(*families: list[Rollout], unboxed: tuple[int, int] = (0, 0)) -> str:
    rollouts = [r for family in families for r in family]
    tested = {r.pid: 2 for r in rollouts}
    run = ModelRun("m", "x.eval", rollouts, tested, unboxed=unboxed)
    return ladder.verdict(run, run.rows()[0])


def test_ladder_names_the_commonest_gap_and_on_how_many_families() -> None:
    composition = [_family(f"c{i}", False, False, False, [True, True]) for i in range(3)]
    capability = _family("x", False, False, False, [False, False])
    direct = _family("d", True, False, False, [True, True])
    assert _ladder(*composition, capability, direct) == "composition gap on 3 of 5 families"
    tie = _ladder(composition[0], capability, direct)
    assert tie == "composition and capability gap on 1 of 3 families each"
    assert _ladder(direct, _family("e", True, True, True, [])) == (
        "no gap: every family solved directly (2)"
    )


def test_ladder_names_no_gap_when_most_rollouts_have_no_boxed_answer() -> None:
    capability = _family("x", False, False, False, [False, False])
    said = _ladder(capability, unboxed=(5, 5))
    assert said == "no gap read: 5 of 5 rollouts have no \\boxed{} answer"
    assert _ladder(capability, unboxed=(2, 5)) == "capability gap on 1 of 1 families"


def _onng(by_lam: dict[float, list[bool]]) -> str:
    records = [
        Record("m", f"p{i}", "mod", lam, correct, None, "ok", 1.0, 10)
        for lam, outcomes in by_lam.items()
        for i, correct in enumerate(outcomes)
    ]
    summary = onng.summarize(records)
    return onng.verdict(summary, summary.rows()[0])


def test_onng_calls_a_trend_only_where_kruskal_wallis_finds_one() -> None:
    fall = _onng({0.0: [True] * 10, 1.0: [False] * 10})
    assert fall.startswith("correct falls from 100 % at lambda=0 to 0 % at lambda=1")
    assert "Kruskal-Wallis p=" in fall
    noise = _onng({0.0: [True, True, False, False], 1.0: [True, False, False, False]})
    assert noise.startswith("no lambda effect (Kruskal-Wallis p=")
    assert noise.endswith("50 % at lambda=0 to 25 % at lambda=1")
    assert _onng({0.0: [False] * 3, 1.0: [False] * 3}) == "the same at every lambda (0 % correct)"
    assert _onng({0.5: [True]}) == "one noise level (lambda=0.5): no trend to read"


def _problem(name: str, proven: int, unproven: int, errors: int = 0) -> ProblemCounts:
    counts = dict.fromkeys(Coherence, 0)
    counts |= {Coherence.PROVEN: proven, Coherence.UNPROVEN: unproven}
    counts[Coherence.SERVER_ERROR] = errors
    return ProblemCounts(name, counts)


def test_prove_counts_the_problems_proved_and_the_largest_supported_pass_at_k() -> None:
    run = ProveRun("m", "x.eval", "success", (1, 4), [_problem("a", 1, 3), _problem("b", 0, 4)])
    summary = prove.summarize(run)
    assert prove.verdict(summary, summary.rows()[0]) == "proves 1 of 2 problems (pass@4 50 %)"
    short = prove.summarize(ProveRun("m", "x.eval", "success", (1, 8), run.problems))
    assert prove.verdict(short, short.rows()[0]) == "proves 1 of 2 problems (pass@1 12 %)"
    unchecked = prove.summarize(ProveRun("m", "x", "success", (1,), [_problem("a", 0, 0, 4)]))
    assert prove.verdict(unchecked, unchecked.rows()[0]) == "no attempt was checked"


def test_t2_says_what_compiles_and_whose_successors_build_in_its_first_context() -> None:
    def share(x: float) -> dict[str, float]:
        return {"estimate": x, "low": x / 2, "high": x * 1.5}

    contexts = {"nl+st": {"compile": share(0.4), "ta": share(0.12)}, "none": {}}
    summary = T2Summary({"model": "m", "log": "x", "rules": "gapscope", "contexts": contexts}, ())
    row = GapRow.share("m", "T2", "compile [nl+st]", 4, 10, "x")
    assert t2.verdict(summary, row) == "compiles 40 %, successors build 12 %"
    empty = T2Summary({"contexts": {"nl+st": {"compile": None, "ta": None}}}, ())
    assert t2.verdict(empty, row) == "nothing checked"


def test_a_spec_without_a_verdict_counts_its_headline_items_that_passed() -> None:
    shares = ShareSummary("parity", "accuracy", "m", "x.eval", {"1": True, "2": False, "3": True})
    (row,) = shares.rows()
    assert outcome_verdict(shares, row) == "2 of 3 items passed"
    every = ShareSummary("parity", "accuracy", "m", "x", {"1": True})
    assert outcome_verdict(every, every.rows()[0]) == "every item passed (1)"
    none = ShareSummary("parity", "accuracy", "m", "x", {"1": False, "2": False})
    assert outcome_verdict(none, none.rows()[0]) == "no item of 2 passed"
    other = GapRow.share("m", "parity", "not an outcome", 1, 2, "x")
    assert outcome_verdict(shares, other) == ""


def test_a_declared_verdict_reads_its_first_readers_logs_only() -> None:
    first, second = share_reader("parity", "parity"), share_reader("parity_b", "parity")
    spec = DiagnosticSpec(
        "parity",
        "parity",
        (first, second),
        plan=lambda budget, inputs, model: [],
        budgets={},
        verdict=lambda summary, row: "declared",
    )
    shares = ShareSummary("parity", "accuracy", "m", "x", {"1": True, "2": False})
    (row,) = shares.rows()
    assert spec.verdict_on(first, shares, row) == "declared"
    assert spec.verdict_on(second, shares, row) == "1 of 2 items passed"
    plain = DiagnosticSpec("p", "p", (first,), plan=lambda b, i, m: [], budgets={})
    assert plain.verdict_on(first, shares, row) == "1 of 2 items passed"
    assert isinstance(first, LogReader)
