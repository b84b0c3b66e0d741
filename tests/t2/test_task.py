"""The t2 task end to end (scripted model, fake REPL), its report, and the commands."""

# ruff: noqa: RUF001  (Lean's double-struck N and Z are meant, not look-alike letters)

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessage, ModelName, ModelOutput
from inspect_ai.scorer import Target
from inspect_ai.solver import TaskState
from rich.console import Console
from typer.testing import CliRunner

from gapscope.analysis.t2 import summarize_log
from gapscope.analysis.t2_tables import print_t2
from gapscope.app.main import app
from gapscope.models.scripted import REQUESTS, script
from gapscope.t2.task import t2

FIXTURE = Path(__file__).parent / "fixtures" / "records.jsonl"
ANSWERS = {
    "double_eq": "theorem double_eq (n : ℕ) : double n = 2 * n := by\n  unfold double\n  omega",
    "sq_nonneg'": "theorem sq_nonneg' (x : ℤ) : 0 ≤ x ^ 2 := by positivity",
}


def _answer(messages: list[ChatMessage]) -> str:
    prompt = messages[-1].text
    name = next(n for n in ANSWERS if f"declaration `{n}`" in prompt)
    code = ANSWERS[name]
    if "natural language" not in prompt and name == "double_eq":
        code += " -- fake-breaks: s4"  # without the NL, the model gets the meaning wrong
    return f"THOUGHT: easy.\n```lean\n{code}\n```"


def _run(task_args: dict[str, object], model: str, tmp_path: Path) -> EvalLog:
    return inspect_eval(t2(**task_args), model=model, log_dir=str(tmp_path / "logs"))[0]  # type: ignore[arg-type]


def test_every_context_is_run_and_reported(fake_lean: str, tmp_path: Path) -> None:
    model = script("t2-contexts", _answer)
    log = _run({"data": str(FIXTURE), "lean": fake_lean}, model, tmp_path)
    assert log.status == "success"
    t2_summary = summarize_log(log, n_resamples=100)
    summary = t2_summary.to_dict()
    contexts = summary["contexts"]
    assert list(contexts) == ["nl+st", "nl", "st", "none"]
    # fixture-2 has no NL, so only its two NL-free settings run.
    assert [contexts[c]["records"] for c in contexts] == [1, 1, 2, 2]
    assert contexts["nl+st"]["ta"]["estimate"] == 1.0
    assert contexts["st"]["ta"]["estimate"] == 0.5
    assert contexts["st"]["graded"]["estimate"] == pytest.approx((0.8 + 1.0) / 2)
    assert contexts["st"]["compile"]["estimate"] == 1.0
    assert contexts["st"]["compile_precision"]["estimate"] == 0.5
    assert summary["skipped"]["missing_nl"] == 2
    assert summary["skipped"]["duplicate_id"] == 1
    assert summary["evaluated_records"] == 2 and summary["records"] == 9
    dependents = {
        s.scores["t2_scorer"].metadata["record"]: s.scores["t2_scorer"].metadata["dependents"]
        for s in log.samples or []
    }
    assert dependents == {"fixture-1.double_eq": 5, "fixture-2.sq_nonneg'": 2}
    assert all(s.scores["t2_scorer"].metadata["hard"] for s in log.samples or [])  # theorems
    assert contexts["st"]["hard"]["records"] == 2
    assert contexts["st"]["hard"]["ta"]["estimate"] == 0.5
    console = Console(record=True, width=300)
    print_t2(t2_summary, console)
    text = console.export_text()
    assert "Hard TA" in text and "50.0 [" in text


def test_prompts_show_what_each_context_allows(fake_lean: str, tmp_path: Path) -> None:
    model = script("t2-prompts", _answer)
    log = _run({"data": str(FIXTURE), "lean": fake_lean, "limit": 1}, model, tmp_path)
    assert log.status == "success"
    prompts = {m[-1].text for m in REQUESTS["t2-prompts"]}
    assert len(prompts) == 4
    nl = "multiplying it by two"
    after = "theorem s1 (n : ℕ)"
    shown = sorted((nl in p, after in p) for p in prompts)
    assert shown == [(False, False), (False, True), (True, False), (True, True)]
    assert all("def double (n : ℕ)" in p and "import Mathlib" in p for p in prompts)
    assert log.plan.config.temperature == 0.6 and log.plan.config.top_p == 0.95
    assert log.eval.config.epochs in (None, 1)


def test_ground_truth_mode_lists_failing_records_for_exclusion(
    fake_lean: str, tmp_path: Path
) -> None:
    rows = [json.loads(line) for line in FIXTURE.read_text().splitlines()[:2]]
    rows[1]["target_code"] += " -- fake-error"
    rows[1]["formal_language"] = rows[1]["formal_language"].replace(
        "by positivity", "by positivity -- fake-error"
    )
    data = tmp_path / "gt.jsonl"
    data.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n")
    log = _run({"data": str(data), "lean": fake_lean, "ground_truth": True}, "none", tmp_path)
    summary = summarize_log(log, n_resamples=50).to_dict()
    assert summary["ground_truth_invalid"] == ["fixture-2.sq_nonneg'"]
    assert list(summary["contexts"]) == ["ground-truth"]
    invalid = tmp_path / "gt.json"
    invalid.write_text(json.dumps(summary))
    model = script("t2-after-gt", _answer)
    log = _run(
        {"data": str(data), "lean": fake_lean, "exclude": str(invalid), "context": "st"},
        model,
        tmp_path,
    )
    later = summarize_log(log, n_resamples=50).to_dict()
    assert later["skipped_ids"]["ground_truth_fails"] == ["fixture-2.sq_nonneg'"]
    assert later["contexts"]["st"]["records"] == 1


def test_the_task_is_registered_for_inspect() -> None:
    from inspect_ai._util.registry import registry_lookup

    import gapscope._registry  # noqa: F401

    assert registry_lookup("task", "gapscope/t2") is not None


def test_bad_context_is_refused() -> None:
    with pytest.raises(ValueError, match="context must be 'all'"):
        t2(data=str(FIXTURE), context="nl+code")


def test_run_t2_without_lean_stops_before_the_model(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("GAPSCOPE_LEAN", raising=False)
    model = script("t2-never", _answer)
    result = CliRunner().invoke(
        app, ["run", "t2", "--data", str(FIXTURE), "--model", model, "--log-dir", str(tmp_path)]
    )
    assert result.exit_code == 2
    assert "No Lean backend is configured" in result.output
    assert REQUESTS["t2-never"] == []


def test_run_t2_with_ray_missing_prints_the_install_line(
    fake_lean: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    result = CliRunner().invoke(
        app,
        ["run", "t2", "--data", str(FIXTURE), "--lean", fake_lean, "--executor", "ray"],
    )
    assert result.exit_code == 2
    assert "pip install 'gapscope[ray]'" in result.output


def test_run_t2_prints_the_report_as_json(fake_lean: str, tmp_path: Path) -> None:
    model = script("t2-cli", _answer)
    args = ["run", "t2", "--data", str(FIXTURE), "--lean", fake_lean, "--context", "st,none"]
    result = CliRunner().invoke(
        app, [*args, "--model", model, "--log-dir", str(tmp_path), "--json"]
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)["details"]
    assert list(summary["contexts"]) == ["st", "none"]
    assert summary["contexts"]["none"]["outcomes"]["checked"] == 2


def test_audit_command_counts_and_ids() -> None:
    result = CliRunner().invoke(app, ["t2", "audit", str(FIXTURE), "--json"])
    assert result.exit_code == 0
    data = json.loads(result.stdout)["details"]
    assert data["counts"]["duplicate_id"] == 1 and data["valid"] == 2
    assert data["ids"]["no_mentioning_successor"] == ["fixture-5.lonely"]
    assert data["successors"] == {
        "records_by_successors": {"0": 1, "1": 3, "2": 1, "5": 2},
        "records_by_direct_successors": {"0": 1, "1": 4, "5": 2},
        "records_by_later_declarations": {"1": 3, "2": 1, "3": 1, "5": 2},
        "no_theorem_proved_without_sorry": 1,
    }
    table = CliRunner().invoke(app, ["t2", "audit", str(FIXTURE)])
    assert "target_not_found_once" in table.stdout
    assert "funnel: records 9 -> without_defects 2 -> successors>=2 2" in table.stdout
    strict = CliRunner().invoke(
        app, ["t2", "audit", str(FIXTURE), "--min-successors", "3", "--json"]
    )
    funnel = json.loads(strict.stdout)["details"]["funnel"]
    assert funnel == {"records": 9, "without_defects": 2, "successors>=3": 1}


def test_min_successors_skips_records_in_the_task(fake_lean: str, tmp_path: Path) -> None:
    args = {"data": str(FIXTURE), "lean": fake_lean, "ground_truth": True, "min_successors": 3}
    summary = summarize_log(_run(args, "none", tmp_path), n_resamples=50).to_dict()
    assert summary["skipped_ids"]["too_few_successors"] == ["fixture-2.sq_nonneg'"]
    assert (summary["evaluated_records"], summary["min_successors"]) == (1, 3)


def test_nl_file_supplies_missing_descriptions(fake_lean: str, tmp_path: Path) -> None:
    nl = tmp_path / "nl.json"
    nl.write_text(json.dumps({"fixture-2.sq_nonneg'": ["A square is never negative."]}))
    model = script("t2-nl", _answer)
    args = {"data": str(FIXTURE), "lean": fake_lean, "nl": str(nl), "context": "nl"}
    log = _run(args, model, tmp_path)
    summary = summarize_log(log, n_resamples=50).to_dict()
    assert summary["contexts"]["nl"]["records"] == 2 and "missing_nl" not in summary["skipped"]
    assert any("never negative" in m[-1].text for m in REQUESTS["t2-nl"])


def test_help_shows_the_install_line_and_paper_defaults() -> None:
    result = CliRunner().invoke(app, ["run", "t2", "--help"], env={"COLUMNS": "200"})
    assert "gapscope[ray]" in result.output
    assert "paper: 0.6" in result.output and "paper: 0.95" in result.output


def test_nl_comes_from_t2s_informalize_array_and_a_fallback_is_said(
    fake_lean: str, tmp_path: Path
) -> None:
    merged = tmp_path / "results_merged.json"
    described = "The target says that doubling equals multiplying by two."
    merged.write_text(
        json.dumps(
            [
                {
                    "id": "fixture-1.double_eq",
                    "natural_language": "the source problem",
                    "target_natural_language": [described],
                }
            ]
        )
    )
    model = script("t2-nl-array", _answer)
    args = {"data": str(FIXTURE), "lean": fake_lean, "context": "nl", "nl": str(merged)}
    log = _run(args, model, tmp_path)
    assert log.status == "success"
    (prompt,) = {m[-1].text for m in REQUESTS["t2-nl-array"]}
    assert described in prompt and "the source problem" not in prompt
    summary = summarize_log(log, n_resamples=20)
    assert summary.to_dict()["nl_fallback"] == ["fixture-2.sq_nonneg'"]
    (note,) = [n for n in summary.notes if "natural_language field" in n]
    assert f"1 record(s) came from their natural_language field (not in {merged})" in note
    plain = _run({"data": str(FIXTURE), "lean": fake_lean, "context": "nl"}, model, tmp_path)
    fallback = summarize_log(plain, n_resamples=20)
    assert fallback.to_dict()["nl_fallback"] == ["fixture-1.double_eq", "fixture-2.sq_nonneg'"]
    assert any("no --nl file given" in n for n in fallback.notes)


def test_a_long_reply_is_scored_while_other_samples_go_on(fake_lean: str) -> None:
    """Reading a long reply is CPU work: the event loop (every other sample) must not wait
    for it. A ticker standing in for another sample keeps ticking while the scorer reads."""
    task = t2(data=str(FIXTURE), lean=fake_lean, limit=1)
    sample = task.dataset[0]
    reply = "```lean\n" + "def x := 1\n" * 11_000 + "```"  # ~120 KB: read, about a second
    state = TaskState(
        model=ModelName("mockllm/model"),
        sample_id=sample.id or 0,
        epoch=1,
        input=sample.input,
        messages=[],
        output=ModelOutput.from_content("mockllm/model", reply),
        metadata=sample.metadata,
    )

    async def score_and_tick() -> tuple[float, int]:
        ticks, done = 0, False

        async def other_sample() -> None:
            nonlocal ticks
            while not done:
                await asyncio.sleep(0.01)
                ticks += 1

        ticker = asyncio.create_task(other_sample())
        await asyncio.sleep(0)
        started = asyncio.get_running_loop().time()
        score = await task.scorer[0](state, Target(""))  # type: ignore[index]
        elapsed = asyncio.get_running_loop().time() - started
        done = True
        await ticker
        assert score is not None and score.metadata is not None
        assert score.metadata["outcome"] == "renamed"  # declares x, not the target
        return elapsed, ticks

    elapsed, ticks = asyncio.run(score_and_tick())
    # the ticker ran through the read (sharing the GIL with the reading thread, it gets some
    # of its 10 ms slots: 67 of 288 measured; on the event loop it got 1)
    assert elapsed > 0.2 and ticks >= elapsed / 0.01 / 10, (elapsed, ticks)
