"""The t2 task end to end (scripted model, fake REPL), its report, and the commands."""

# ruff: noqa: RUF001  (Lean's double-struck N and Z are meant, not look-alike letters)

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessage
from typer.testing import CliRunner

from gapscope.analysis.t2 import summarize_log
from gapscope.app.main import app
from gapscope.t2.task import t2
from tests.conftest import REQUESTS, script
from tests.t2.conftest import FAKE_LEAN

FIXTURE = Path(__file__).parent / "fixtures" / "records.jsonl"
ANSWERS = {
    "double_eq": "theorem double_eq (n : ℕ) : double n = 2 * n := by\n  unfold double\n  omega",
    "sq_nonneg'": "theorem sq_nonneg' (x : ℤ) : 0 ≤ x ^ 2 := by positivity",
}


@pytest.fixture
def fake_lean(project: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("GAPSCOPE_LEAN_REPL_CMD", f"{sys.executable} {FAKE_LEAN}")
    monkeypatch.setenv("FAKE_LEAN_T2", "1")
    monkeypatch.setenv("GAPSCOPE_LEAN_ALLOW_UNSANDBOXED", "1")  # where bubblewrap is missing
    return f"local:{project}"


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
    summary = summarize_log(log, n_resamples=100).to_dict()
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
        "records_by_successors": {"1": 3, "2": 2, "5": 2},
        "records_by_mentioning_successors": {"0": 1, "1": 4, "5": 2},
        "no_theorem_proved_without_sorry": 0,
    }
    table = CliRunner().invoke(app, ["t2", "audit", str(FIXTURE)])
    assert "target_not_found_once" in table.stdout


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
