"""The OracleLadder task end to end with a scripted student, then the report over its log."""

from __future__ import annotations

import gc
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessage
from typer.testing import CliRunner

import gapscope.ladder.task as ladder_task
from gapscope.analysis.ladder import build_report, model_run
from gapscope.app.main import app
from gapscope.ladder.families import Family, load_bundled
from gapscope.ladder.probes import Condition, build_probes
from gapscope.ladder.task import oracle_ladder, parse_conditions
from gapscope.models.scripted import script
from gapscope.verify import Verifier

LIMIT = 4


def _student(solves: set[Condition]) -> Callable[[list[ChatMessage]], str]:
    """A student that answers correctly exactly under the ``solves`` conditions."""
    families = load_bundled().families[:LIMIT]
    gold = {p.prompt: (p.condition, p.gold) for p in build_probes(families)}

    def reply(messages: list[ChatMessage]) -> str:
        condition, answer = gold[messages[-1].text]
        boxed = answer if condition in solves else "-987654321"
        return f"Let me think step by step.\nSo the result is \\boxed{{{boxed}}}."

    return reply


def _run(tmp_path: Path, name: str, solves: set[Condition], k: int = 2) -> EvalLog:
    model = script(name, _student(solves))
    log = inspect_eval(
        oracle_ladder(families="bundled", k=k, limit=LIMIT, verify_timeout=20),
        model=model,
        log_dir=str(tmp_path),
        display="none",
    )[0]
    assert log.status == "success", log.error
    return log


def test_milestone_execution_gap_student(tmp_path: Path) -> None:
    log = _run(tmp_path, "exec-gap", {Condition.S0, Condition.C3, Condition.C3_MISMATCHED})
    assert log.samples is not None
    n_probes = len(build_probes(load_bundled().families[:LIMIT]))
    assert len(log.samples) == 2 * n_probes  # k epochs of every probe
    report = build_report([model_run(log, "student")]).to_dict()
    student = report["models"]["student"]
    assert student["outcomes"] == {
        "DIRECT": 0,
        "ROADMAP-NEEDED": 0,
        "ANSWERS-NEEDED": LIMIT,
        "UNRECOVERED": 0,
    }
    assert student["gaps"]["milestone-execution"] == LIMIT
    assert student["milestone_pass_fraction"] == 1.0
    assert student["solved_by_condition"] == {
        "C1": 0,
        "C2": 0,
        "C3": LIMIT,
        "C2-random": 0,
        "C2-generic": 0,
        "C3-mismatched": LIMIT,
    }
    assert student["direct_accuracy"] == 0.0


def test_two_runs_report_transitions_and_stability(tmp_path: Path) -> None:
    composition = _run(tmp_path, "composer", {Condition.S0})
    direct = _run(tmp_path, "direct", {Condition.C1, Condition.S0})
    runner = CliRunner()
    result = runner.invoke(
        app,
        ["ladder", "report", composition.location, direct.location]
        + ["--names", "before,after", "--json", "--resamples", "200"],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)["details"]
    assert report["models"]["before"]["gaps"]["composition"] == LIMIT
    assert report["models"]["after"]["outcomes"]["DIRECT"] == LIMIT
    assert report["transition_matrix"]["UNRECOVERED"]["DIRECT"] == LIMIT
    pairs = {(s["a"], s["b"]): s["a_beats_b"] for s in report["ranking_stability"]}
    assert pairs[("after", "before")] == 1.0
    human = runner.invoke(app, ["ladder", "report", composition.location])
    assert human.exit_code == 0
    assert "composition" in human.output and "UNRECOVERED" in human.output


def test_condition_spec_errors_name_the_choices() -> None:
    assert parse_conditions("C1,S0") == (Condition.C1, Condition.S0)
    with pytest.raises(ValueError, match="unknown condition"):
        parse_conditions("C4")


def test_the_families_version_is_applied_and_recorded(tmp_path: Path) -> None:
    record = load_bundled().families[0].to_dict()
    record |= {"parent_answer_corrected": "corrected gold", "milestone_gold_invalid": [0]}
    path = tmp_path / "families.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    n_tested = len(Family.from_dict(record).as_published().tested_indices)
    for version, gold, tested in (
        ("corrected", "corrected gold", n_tested - 1),
        ("published", record["parent_answer"], n_tested),
    ):
        task = oracle_ladder(families=str(path), k=1, conditions="C1", families_version=version)
        assert task.metadata is not None
        assert task.metadata["families_version"] == version
        assert task.metadata["tested_milestones"] == {record["pid"]: tested}
        assert [s.target for s in task.dataset] == [gold]
    with pytest.raises(ValueError, match="families_version must be one of corrected, published"):
        oracle_ladder(families=str(path), families_version="paper")


def test_run_ladder_cli_prints_the_outcome_table_as_json(tmp_path: Path) -> None:
    model = script("cli-student", _student({Condition.C2, Condition.S0}))
    runner = CliRunner()
    args = ["run", "ladder", "--bundled", "--model", model, "-k", "1", "--limit", str(LIMIT)]
    result = runner.invoke(app, [*args, "--json", "--log-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    envelope = json.loads(result.stdout)
    student = envelope["details"]["models"][model]
    rows = {r["metric"]: r["value"] for r in envelope["summary"]}
    assert rows["outcome ROADMAP-NEEDED"] == 100.0 and rows["gap roadmap"] == 100.0
    assert student["outcomes"]["ROADMAP-NEEDED"] == LIMIT
    assert student["gaps"]["roadmap"] == LIMIT
    # C2 solves all 4 families, no control any: p = 2 / 2^4 against each C2 control, Holm
    # 3 x 0.125 for both; C3 and C3-mismatched solve nothing, p = 1
    tests = {(t["matched"], t["control"]): t for t in student["specificity_tests"]}
    assert tests[("C2", "C2-random")] == {
        "matched": "C2",
        "control": "C2-random",
        "families": LIMIT,
        "matched_only": LIMIT,
        "control_only": 0,
        "p_value": 0.125,
        "p_holm": 0.375,
    }
    assert tests[("C2", "C2-generic")]["p_holm"] == 0.375
    assert tests[("C3", "C3-mismatched")]["p_value"] == tests[("C3", "C3-mismatched")]["p_holm"]
    assert tests[("C3", "C3-mismatched")]["p_value"] == 1.0
    both = runner.invoke(app, ["run", "ladder", "--bundled", "--families", "x.jsonl"])
    assert both.exit_code == 2 and "exactly one of --families F or --bundled" in both.output
    missing = runner.invoke(app, ["run", "ladder", "--families", str(tmp_path / "none.jsonl")])
    assert missing.exit_code == 2


def test_scores_carry_the_graded_answer_and_noanswer_without_a_box(tmp_path: Path) -> None:
    families = load_bundled().families[:1]
    gold = {p.prompt: p.gold for p in build_probes(families, (Condition.C1, Condition.S0))}

    def reply(messages: list[ChatMessage]) -> str:
        answer = gold[messages[-1].text]
        # Stage 0 answers boxed and right; parent probes give the right value unboxed
        return f"\\boxed{{{answer}}}" if "milestone" in messages[-1].text[:80] else answer

    log = inspect_eval(
        oracle_ladder(families="bundled", k=1, conditions="C1,S0", limit=1, verify_timeout=20),
        model=script("format-failure", reply),
        log_dir=str(tmp_path),
        display="none",
    )[0]
    assert log.status == "success" and log.samples
    for sample in log.samples:
        score = next(iter((sample.scores or {}).values()))
        if sample.metadata["condition"] == "S0":
            assert score.value == "C" and score.answer == sample.target
        else:
            assert score.value == "N" and score.answer is None
            assert score.metadata == {"reason": "no_boxed", "stage": "extract"}
    assert log.plan.config.max_tokens == 16384  # the paper's budget is the default


def test_ladder_screen_keeps_what_the_anchor_fails_but_can_decompose(tmp_path: Path) -> None:
    families = load_bundled().families[:LIMIT]
    compiled = tmp_path / "compiled.jsonl"
    compiled.write_text("".join(json.dumps(f.to_dict()) + "\n" for f in families), "utf-8")
    failing = families[0].pid  # the anchor solves every family directly except this one
    gold = {p.prompt: (p.pid, p.condition, p.gold) for p in build_probes(families)}

    def reply(messages: list[ChatMessage]) -> str:
        pid, condition, answer = gold[messages[-1].text]
        wrong = condition is Condition.C1 and pid == failing
        return f"\\boxed{{{'-987654321' if wrong else answer}}}"

    log = inspect_eval(
        oracle_ladder(families=str(compiled), k=1, conditions="C1,S0", verify_timeout=20),
        model=script("anchor", reply),
        log_dir=str(tmp_path),
        display="none",
    )[0]
    out = tmp_path / "screened.jsonl"
    args = ["ladder", "screen", log.location, "--families", str(compiled), "--out", str(out)]
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    funnel = json.loads(result.stdout)["details"]["funnel"]
    assert funnel["compiled"] == LIMIT and funnel["anchor_fails_parent"] == 1
    assert funnel["kept"] == (len(families[0].tested_milestones) >= 2)
    kept = [json.loads(line)["pid"] for line in out.read_text().splitlines()]
    assert kept == [failing] * funnel["kept"]
    direct = CliRunner().invoke(app, [*args, "--direct-failure-only", "--json"])
    assert direct.exit_code == 0, direct.output
    funnel = json.loads(direct.stdout)["details"]["funnel"]
    assert funnel == {"compiled": LIMIT, "anchor_fails_parent": 1, "kept": 1}
    assert [json.loads(line)["pid"] for line in out.read_text().splitlines()] == [failing]
    before = compiled.read_text()
    for clash in (compiled, Path(log.location)):  # an output over an input is refused
        args = ["ladder", "screen", log.location, "--families", str(compiled), "--out", str(clash)]
        refused = CliRunner().invoke(app, [*args, "--json"])
        assert refused.exit_code == 2 and f"{clash} is also the input" in refused.stdout
    assert compiled.read_text() == before


def test_the_verifier_pool_is_closed_when_the_task_is_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    closed: list[bool] = []

    class RecordingVerifier(Verifier):
        def close(self) -> None:
            closed.append(True)
            super().close()

    monkeypatch.setattr(ladder_task, "Verifier", RecordingVerifier)
    task = oracle_ladder(families="bundled", k=1, conditions="C1", limit=1, verify_timeout=20)
    log = inspect_eval(
        task, model=script("closer", lambda m: "\\boxed{1}"), log_dir=str(tmp_path), display="none"
    )[0]
    assert log.status == "success"
    del task, log
    gc.collect()
    assert closed == [True]


def test_the_scorer_reuses_the_warm_shared_verifier_at_the_default_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A verifier of its own starts a second worker pool (seconds) per task; the shared one
    is already warm from building the probes."""
    import gapscope.ladder.task as ladder_task

    made: list[float] = []

    class Counting(ladder_task.Verifier):
        def __init__(self, timeout_s: float = 5.0) -> None:
            made.append(timeout_s)
            super().__init__(timeout_s=timeout_s)

    monkeypatch.setattr(ladder_task, "Verifier", Counting)
    ladder_task.ladder_verifier()
    assert made == []
    ladder_task.ladder_verifier(2.0)
    assert made == [2.0]
