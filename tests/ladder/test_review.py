"""The rubric review: the judge's reply, the priority rule, the shares, and the CLI end to end."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessage
from typer.testing import CliRunner

from gapscope.analysis.diagnostics import load
from gapscope.app.main import app
from gapscope.ladder.families import load_bundled
from gapscope.ladder.probes import Condition
from gapscope.ladder.review import (
    PRIORITY,
    ModelTotals,
    model_review,
    parse_removed,
    parse_verdict,
)
from gapscope.ladder.task import oracle_ladder
from gapscope.models.scripted import REQUESTS, script
from tests.ladder.test_ladder_task import LIMIT, _student

VF, DR, RO, GEN = PRIORITY


def test_the_priority_rule_names_a_family_by_its_first_flag() -> None:
    reply = 'Here is my verdict:\n```json\n{"flags": ["genuine-composition", "Verifier-Format"],'
    reply += ' "rationale": "boxed 125 miles"}\n```'
    verdict = parse_verdict(reply)
    assert verdict.flags == (VF, GEN)
    assert verdict.label is VF and verdict.rationale == "boxed 125 miles"
    assert parse_verdict('{"flags": ["roadmap-omission", "defective-reference"]}').label is DR


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("It is a genuine failure.", "no JSON object"),
        ('{"flags": "genuine-composition"}', '"flags" list'),
        ('{"flags": []}', "no category"),
        ('{"flags": ["lucky-guess"]}', "unknown categories"),
    ],
)
def test_an_off_rubric_reply_is_an_error_naming_why(reply: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_verdict(reply)


def test_shares_before_and_after_by_hand() -> None:
    # 10 families, 5 composition gaps; the judge labels 4 of them, one reply was unreadable
    review = model_review(ModelTotals(10, 5, "log"), [VF, DR, RO, GEN, None])
    assert (review.flagged, review.unlabelled, review.reviewed) == (2, 1, 5)
    assert review.share_before == 0.5
    assert review.share_after == pytest.approx(0.3)  # (5 - 2) / 10: the set keeps its size
    assert review.flag_rate == 0.5  # 2 of the 4 labelled
    only_verifier = model_review(ModelTotals(10, 5, "log"), [VF, DR], frozenset({VF}))
    assert only_verifier.flagged == 1 and only_verifier.share_after == pytest.approx(0.4)
    assert parse_removed("verifier-format") == frozenset({VF})
    with pytest.raises(ValueError, match="unknown categories"):
        parse_removed("verifier")


PIDS = [f.pid for f in load_bundled().families[:LIMIT]]
JUDGED: dict[str, str] = {
    PIDS[0]: '{"flags": ["genuine-composition", "verifier-format"], "rationale": "format"}',
    PIDS[1]: '{"flags": ["defective-reference"], "rationale": "wrong gold"}',
    PIDS[2]: '{"flags": ["roadmap-omission"], "rationale": "a step is missing"}',
    PIDS[3]: "I cannot decide.",
}


def _judge(messages: list[ChatMessage]) -> str:
    match = re.search(r"^Family: (\S+)$", messages[-1].text, re.MULTILINE)
    assert match is not None
    return JUDGED[match.group(1)]


@pytest.fixture(scope="module")
def composer_log(tmp_path_factory: pytest.TempPathFactory) -> EvalLog:
    """A student that solves every milestone alone and no parent probe: 4 composition gaps."""
    log = inspect_eval(
        oracle_ladder(families="bundled", k=2, limit=LIMIT, conditions="ladder", verify_timeout=20),
        model=script("review-composer", _student({Condition.S0})),
        log_dir=str(tmp_path_factory.mktemp("composer")),
        display="none",
    )[0]
    assert log.status == "success", log.error
    return log


def _review(log: EvalLog, judge: str, log_dir: Path) -> dict[str, object]:
    model = script(judge, _judge)
    args = ["ladder", "review", log.location, "--judge", model, "--names", "student"]
    result = CliRunner().invoke(app, [*args, "--log-dir", str(log_dir), "--json"])
    assert result.exit_code == 0, result.output
    envelope: dict[str, object] = json.loads(result.stdout)
    return envelope


def test_review_cli_labels_each_composition_family(composer_log: EvalLog, tmp_path: Path) -> None:
    envelope = _review(composer_log, "judge-a", tmp_path)
    (review,) = envelope["details"]["reviews"]  # type: ignore[index]
    student = review["models"]["student"]
    assert (student["n_families"], student["composition"], student["reviewed"]) == (4, 4, 4)
    assert student["labels"] == {VF: 1, DR: 1, RO: 1, GEN: 0}
    assert student["unlabelled"] == 1 and student["flagged"] == 2
    assert student["share_before"] == 1.0 and student["share_after"] == 0.5
    assert student["flag_rate"] == pytest.approx(2 / 3)
    rows = {r["metric"]: r["value"] for r in envelope["summary"]}  # type: ignore[attr-defined]
    assert rows["composition gap after review"] == 50.0
    # the judge saw the rubric, the C3 turn with the milestone golds, the gold and both attempts
    system, user = REQUESTS["judge-a"][0]
    assert "genuine-composition" in system.text and "roadmap-omission" in system.text
    family = load_bundled().families[0]
    assert f"Family: {family.pid}" in user.text and family.gold_answer in user.text
    assert family.tested_milestones[0].answer in user.text
    assert user.text.count("\\boxed{-987654321}") == 2
    assert (tmp_path / "review-cases.json").is_file()
    loaded = load(Path(envelope["logs"][0]))  # type: ignore[index]  # what `gapscope report` reads
    assert loaded.diagnostic.task == "ladder_review"
    assert {r.metric: r.value for r in loaded.summary.rows()}["review flag rate"] == pytest.approx(
        200 / 3
    )


def test_review_report_agreement_with_a_human_and_a_second_judge(
    composer_log: EvalLog, tmp_path: Path
) -> None:
    first = _review(composer_log, "judge-b", tmp_path / "b")["logs"][0]  # type: ignore[index]
    second = _review(composer_log, "judge-c", tmp_path / "c")["logs"][0]  # type: ignore[index]
    human = tmp_path / "human.jsonl"
    labels = [VF, VF, RO, GEN]
    human.write_text(
        "".join(
            json.dumps({"pid": p, "label": str(x)}) + "\n"
            for p, x in zip(PIDS, labels, strict=True)
        )
    )
    args = ["ladder", "review-report", first, second, "--human", str(human), "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    judges, judge_b_human, judge_c_human = json.loads(result.stdout)["details"]["agreement"]
    assert judges["n"] == 3 and judges["raw"] == 1.0 and judges["kappa"] == pytest.approx(1.0)
    # judge VF, DR, RO (the fourth unreadable) vs human VF, VF, RO: p_o = 2/3; marginals
    # judge 1/1/1, human VF 2, RO 1: p_e = (1*2 + 1*1) / 9 = 1/3; kappa = (1/3) / (2/3) = 0.5
    assert judge_b_human["n"] == 3
    assert judge_b_human["raw"] == pytest.approx(2 / 3)
    assert judge_b_human["kappa"] == pytest.approx(0.5)
    assert judge_c_human == judge_b_human | {"a": judge_c_human["a"]}
    human.write_text(json.dumps({"pid": PIDS[0], "label": "unsure"}) + "\n")
    bad = CliRunner().invoke(app, ["ladder", "review-report", first, "--human", str(human)])
    assert bad.exit_code == 2 and "unsure" in bad.output


def test_review_of_logs_without_a_composition_gap_is_bad_input(tmp_path: Path) -> None:
    log = inspect_eval(
        oracle_ladder(families="bundled", k=1, limit=2, conditions="ladder", verify_timeout=20),
        model=script("review-direct", _student({Condition.C1, Condition.S0})),
        log_dir=str(tmp_path),
        display="none",
    )[0]
    args = ["ladder", "review", log.location, "--judge", script("judge-d", _judge), "--json"]
    result = CliRunner().invoke(app, [*args, "--log-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "no composition-gap family" in json.loads(result.stdout)["error"]
