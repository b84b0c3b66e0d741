"""The onng task end to end: scripted model, fake Lean backend, report over the log."""

from __future__ import annotations

import gc
import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessage
from typer.testing import CliRunner

import gapscope.onng.task as onng_task
from gapscope.analysis.onng import records_from_log, summarize
from gapscope.app.onng import onng_app
from gapscope.lean.backend import CheckRequest, LeanUnavailable
from gapscope.lean.verdict import LeanMessage, LeanVerdict, Status
from gapscope.models.scripted import script
from gapscope.onng.problemset import load_problem_set


class FakeLean:
    """Valid unless the file contains ``sorry``; records every request."""

    def __init__(self) -> None:
        self.requests: list[CheckRequest] = []

    @property
    def toolchain(self) -> str:
        return "fake-4.27"

    def check_many(self, requests: Sequence[CheckRequest]) -> list[LeanVerdict]:
        self.requests.extend(requests)
        return [
            LeanVerdict(Status.SORRY, (LeanMessage("warning", "uses sorry"),))
            if "sorry" in r.code
            else LeanVerdict(Status.VALID)
            for r in requests
        ]

    def close(self) -> None:
        self.closed = True

    closed = False


class BrokenLean(FakeLean):
    """A backend whose every check raises (a crashed server, a protocol bug)."""

    def check_many(self, requests: Sequence[CheckRequest]) -> list[LeanVerdict]:
        raise ConnectionError("REPL died")


def _reply(messages: list[ChatMessage]) -> str:
    """Proves the target at lambda 0 (prompts mention `MyNat`), gives up with sorry when the
    names are scrambled, and answers zero_add (recognisable at lambda 0) with no JSON."""
    prompt = messages[-1].text
    if "zero_add" in prompt.split("Target:")[1]:
        return "I cannot do this."
    proof = "rfl" if "MyNat" in prompt else "sorry"
    return json.dumps({"draft": "direct", "code": proof})


def test_task_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeLean()
    monkeypatch.setattr(onng_task, "open_checker", lambda spec, **_: fake)
    task = onng_task.onng(lams="0,1.0", modules="tutorial,addition", limit=10, lean="fake")
    log = inspect_eval(task, model=script("onng", _reply), log_dir=str(tmp_path), display="none")[0]
    assert log.status == "success", log.error
    assert log.samples is not None and len(log.samples) == 20
    assert len(fake.requests) == 19  # zero_add at lambda 0 answered without JSON
    assert all("\nexample : " in r.code for r in fake.requests)
    records = records_from_log(log)
    by_id = {(r.problem, r.lam): r for r in records}
    assert by_id[("zero_add", 0.0)].parse_status == "no_json"
    assert by_id[("zero_add", 0.0)].status is None and not by_id[("zero_add", 0.0)].correct
    assert by_id[("tutorial_rfl", 0.0)].correct and by_id[("tutorial_rfl", 0.0)].status == "valid"
    assert not by_id[("tutorial_rfl", 1.0)].correct
    assert all(r.inference_s >= 0 for r in records)
    curve = summarize(records).models[records[0].model].curve
    assert curve == [(0.0, pytest.approx(0.9)), (1.0, 0.0)]
    result = CliRunner().invoke(onng_app, ["report", "--json", log.location])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["details"]["models"]


def test_task_refuses_without_lean(monkeypatch: pytest.MonkeyPatch) -> None:
    def unavailable(spec: str | None, **_: object) -> FakeLean:
        raise LeanUnavailable("install Lean: gapscope lean setup DIR")

    monkeypatch.setattr(onng_task, "open_checker", unavailable)
    with pytest.raises(LeanUnavailable, match="gapscope lean setup"):
        onng_task.onng(lams="0")


def test_default_open_lean_raises_when_nothing_configured() -> None:
    with pytest.raises(LeanUnavailable):
        onng_task.open_checker(None)


@pytest.mark.parametrize("bad", ["", "2", "0,0", "x"])
def test_bad_lams(bad: str) -> None:
    with pytest.raises(ValueError, match="lams"):
        onng_task.parse_lams(bad)


def test_bad_module(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(onng_task, "open_checker", lambda spec, **_: FakeLean())
    with pytest.raises(ValueError, match="unknown module"):
        onng_task.onng(modules="geometry")


def test_render_command(tmp_path: Path) -> None:
    out = tmp_path / "r"
    result = CliRunner().invoke(
        onng_app, ["render", "--lam", "0.5", "--seed", "2", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    renaming = json.loads((out / "renaming.json").read_text(encoding="utf-8"))
    assert "add_comm" in renaming
    assert (out / "library.lean").read_text(encoding="utf-8").startswith("macro")
    assert len(list((out / "prompts").glob("*.txt"))) == len(load_problem_set().problems)


def test_run_onng_cli_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gapscope.app.main import app

    monkeypatch.setattr(onng_task, "open_checker", lambda spec, **_: FakeLean())
    args = ["run", "onng", "--model", script("onng-cli", _reply), "--lams", "0,1.0"]
    args += ["--modules", "tutorial", "--limit", "3", "--lean", "fake", "--json"]
    result = CliRunner().invoke(app, [*args, "--log-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    envelope = json.loads(result.stdout)
    (model,) = envelope["details"]["models"].values()
    assert model["curve"] == [[0.0, 1.0], [1.0, 0.0]]
    assert [(r["metric"], r["value"]) for r in envelope["summary"]] == [
        ("correct [lambda=0]", 100.0),
        ("correct [lambda=1]", 0.0),
    ]


def test_run_onng_without_lean_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from gapscope.app.main import app

    monkeypatch.delenv("GAPSCOPE_LEAN", raising=False)
    result = CliRunner().invoke(app, ["run", "onng", "--model", "none"])
    assert result.exit_code == 2
    assert "gapscope lean setup" in result.output


def _automation(messages: list[ChatMessage]) -> str:
    """Proves everything with core automation, keys as the paper writes them."""
    return json.dumps({"Draft": "automation", "Code": "simp <;> decide"})


def test_automation_is_rejected_before_lean_at_every_lambda(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeLean()
    monkeypatch.setattr(onng_task, "open_checker", lambda spec, **_: fake)
    task = onng_task.onng(lams="0,0.5,1.0", modules="tutorial", limit=3, lean="fake")
    log = inspect_eval(
        task, model=script("simp", _automation), log_dir=str(tmp_path), display="none"
    )[0]
    assert log.status == "success" and log.samples
    assert fake.requests == []  # nothing reached Lean
    for sample in log.samples:
        record = sample.store["onng"]
        assert record["status"] == "disallowed_tactic"
        assert record["detail"] == "tactics outside the closed theory: simp, decide"
        assert next(iter((sample.scores or {}).values())).value == "I"


def test_a_backend_failure_is_a_server_error_for_that_sample(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = BrokenLean()
    monkeypatch.setattr(onng_task, "open_checker", lambda spec, **_: broken)
    task = onng_task.onng(lams="0", modules="tutorial", limit=2, lean="fake")
    log = inspect_eval(
        task, model=script("onng-broken", _reply), log_dir=str(tmp_path), display="none"
    )[0]
    assert log.status == "success" and log.samples and len(log.samples) == 2
    for sample in log.samples:
        assert sample.store["onng"]["status"] == "server_error"
        assert "ConnectionError: REPL died" in sample.store["onng"]["detail"]
    del task, log
    gc.collect()
    assert broken.closed  # the backend is closed once the task is done with it
