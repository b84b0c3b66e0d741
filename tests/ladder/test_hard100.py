"""MATH hard-100: the id selection, the task, pass@1 / pass@k from a log and from the release."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessage
from typer.testing import CliRunner

from gapscope.analysis.ladder_hard100 import read_hard100_log, read_hard100_panel
from gapscope.app.main import app
from gapscope.ladder.hard100 import (
    Hard100Error,
    gains,
    load_hard100,
    read_hard100_ids,
    score_hard100,
)
from gapscope.ladder.hard100_task import ladder_math_hard100
from gapscope.models.scripted import script
from tests.environment import SharedData

IDS = [f"test/algebra/{i}.json" for i in range(100)]


def _math500(tmp_path: Path, extra: int = 5) -> Path:
    """A MATH500-shaped file: the 100 ids (answer ``i + 1``) and a few other problems."""
    rows = [
        {"problem": f"Compute {i} + 1.", "answer": str(i + 1), "level": 5, "unique_id": uid}
        for i, uid in enumerate(IDS)
    ]
    rows += [
        {"problem": "Other.", "answer": "0", "level": 1, "unique_id": f"test/x/{j}.json"}
        for j in range(extra)
    ]
    path = tmp_path / "math500.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in reversed(rows)), encoding="utf-8")
    return path


def _panel_ids(tmp_path: Path, ids: list[str]) -> Path:
    records = [{"model": m, "pid": i, "n_correct": 1, "k": 8} for m in ("a", "b") for i in ids]
    path = tmp_path / "panel.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_ids_come_from_a_released_panel_or_a_plain_list(tmp_path: Path) -> None:
    assert read_hard100_ids(_panel_ids(tmp_path, IDS)) == IDS  # each id once, first-seen order
    plain = tmp_path / "ids.txt"
    plain.write_text("\n".join(IDS) + "\n\n", encoding="utf-8")
    assert read_hard100_ids(plain) == IDS
    plain.write_text("\n".join(IDS[:99]), encoding="utf-8")
    with pytest.raises(Hard100Error, match="99 distinct problem ids, expected 100"):
        read_hard100_ids(plain)
    plain.write_text('{"model": "a"}\n', encoding="utf-8")
    with pytest.raises(Hard100Error, match=r"ids.txt:1: a record without a 'pid' string"):
        read_hard100_ids(plain)


def test_problems_are_taken_from_math500_in_the_listed_order(tmp_path: Path) -> None:
    problems = load_hard100(str(_math500(tmp_path)), _panel_ids(tmp_path, IDS))
    assert [p.pid for p in problems] == [f"math500-{i}" for i in IDS]
    assert (problems[7].problem, problems[7].answer) == ("Compute 7 + 1.", "8")
    other = [*IDS[:99], "test/geometry/999.json"]
    with pytest.raises(Hard100Error, match=r"1 of the 100 ids .* \(first: test/geometry/999"):
        load_hard100(str(_math500(tmp_path)), _panel_ids(tmp_path, other))


def test_pass_at_1_is_the_mean_correctness_and_pass_at_k_any_correct() -> None:
    # 8/8, 0/8, 2/8, 1/8: pass@1 = (1 + 0 + 0.25 + 0.125) / 4, pass@8 = 3 of 4 problems
    score = score_hard100("m", {"p": (8, 8), "q": (8, 0), "r": (8, 2), "s": (8, 1)})
    assert (score.rollouts, score.pass_at_1, score.pass_at_k) == (8, 0.34375, 0.75)
    assert score.to_dict()["pass_at_8"] == 0.75
    base = score_hard100("base", {"p": (8, 2), "q": (8, 0)})
    assert gains([score, base], "base") == {"m": pytest.approx(21.875), "base": 0.0}
    with pytest.raises(Hard100Error, match="baseline 'z' is none of m, base"):
        gains([score, base], "z")
    with pytest.raises(Hard100Error, match="m: no graded problem"):
        score_hard100("m", {})


def test_the_task_grades_each_problem_k_times_and_the_readout_counts_them(
    tmp_path: Path,
) -> None:
    math500, ids = _math500(tmp_path), _panel_ids(tmp_path, IDS)
    calls: dict[str, int] = {}

    def reply(messages: list[ChatMessage]) -> str:
        # right on problems 0-49; on 50-99 right only on a problem's first call
        text = messages[-1].text
        i = int(text.split("Compute ")[1].split(" ")[0])
        calls[text] = calls.get(text, 0) + 1
        right = i < 50 or calls[text] == 1
        return f"So \\boxed{{{i + 1 if right else -1}}}."

    task = ladder_math_hard100(math500=str(math500), ids=str(ids), k=2)
    assert task.metadata is not None and task.metadata["n_problems"] == 100
    log = inspect_eval(task, model=script("hard100", reply), log_dir=str(tmp_path), display="none")[
        0
    ]
    assert log.status == "success", log.error
    score = read_hard100_log(log.location, "student")
    # 50 problems 2/2, 50 problems 1/2: pass@1 = 0.75, pass@2 = 1
    assert (score.n_problems, score.rollouts) == (100, 2)
    assert (score.pass_at_1, score.pass_at_k) == (0.75, 1.0)
    result = CliRunner().invoke(app, ["ladder", "hard100", log.location, "--json"])
    assert result.exit_code == 0, result.output
    details = json.loads(result.stdout)["details"]
    assert details["scores"][0]["pass_at_1"] == 0.75


def test_a_released_panel_record_that_is_no_count_is_named(tmp_path: Path) -> None:
    path = tmp_path / "panel.jsonl"
    path.write_text('{"model": "a", "pid": "p", "n_correct": 9, "k": 8}\n', encoding="utf-8")
    with pytest.raises(Hard100Error, match=r"panel.jsonl:1: n_correct 9 of k 8 is not a count"):
        read_hard100_panel(path)


def test_the_released_panel_gives_the_papers_hard100_numbers(shared_data: SharedData) -> None:
    panel = shared_data("oracleladder/data/math_hard100_panel_16k.jsonl")
    scores = {s.model: s for s in read_hard100_panel(panel)}
    # Appendix J: OutcomeRL-2K 0.654 and MilestoneRL-2K 0.634 pass@1; Section 4.4: +20.0 and
    # +18.0 points over Qwen3-8B-Base
    assert round(scores["base_2k_step_180"].pass_at_1, 3) == 0.654
    assert round(scores["mile_2k_step_180"].pass_at_1, 3) == 0.634
    gain = gains(list(scores.values()), "qwen3_8b_pre_rl")
    assert round(gain["base_2k_step_180"], 1) == 20.0
    assert round(gain["mile_2k_step_180"], 1) == 18.0
    assert all(s.n_problems == 100 and s.rollouts == 8 for s in scores.values())
    # the selection: 100 level-5 problems of MATH500's test split
    math500 = shared_data("math/math500_test.jsonl")
    level = {
        r["unique_id"]: r["level"]
        for r in map(json.loads, math500.read_text(encoding="utf-8").splitlines())
    }
    assert {level[i] for i in read_hard100_ids(panel)} == {5}
    assert len(load_hard100(str(math500), panel)) == 100
