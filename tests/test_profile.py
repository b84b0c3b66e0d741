"""``gapscope profile``: the plan matches the run, a rerun resumes, Lean diagnostics are skipped
with the fix, and the study ends with a report."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import ChatMessage
from typer.testing import CliRunner

from gapscope.app.main import app
from gapscope.models.scripted import REQUESTS, script
from tests.openai_stub import StubServer, serve

runner = CliRunner()


def _answer(messages: list[ChatMessage]) -> str:
    """An S2B listener's decision or a boxed OracleLadder answer, whichever is asked."""
    last = messages[-1].text
    return "Answer: same" if "Game " in last or "Sync round" in last else "\\boxed{1}"


class FlakyLadder:
    """A server that went away mid-study: OracleLadder calls fail from the ``fail_from``-th on
    (S2B-LM games are answered throughout)."""

    def __init__(self, fail_from: int | None = None) -> None:
        self.fail_from = fail_from
        self.ladder_calls = 0
        self.s2b_calls = 0

    def __call__(self, messages: list[ChatMessage]) -> str:
        reply = _answer(messages)
        if reply.startswith("Answer"):
            self.s2b_calls += 1
            return reply
        self.ladder_calls += 1
        if self.fail_from is not None and self.ladder_calls >= self.fail_from:
            raise RuntimeError("server unavailable")
        return reply


def _profile(model: str, log_dir: Path, *extra: str) -> dict[str, object]:
    args = ["profile", "--model", model, "--budget", "quick", "--diagnostics", "s2b,ladder"]
    result = runner.invoke(app, [*args, "--log-dir", str(log_dir), "--json", *extra])
    assert result.stdout, result.output
    envelope: dict[str, object] = json.loads(result.stdout)
    envelope["exit_code"] = result.exit_code
    return envelope


def test_dry_run_numbers_are_what_the_run_then_does(tmp_path: Path) -> None:
    model = script("profile-count", _answer)
    plan = _profile(model, tmp_path, "--dry-run")["details"]["plan"]  # type: ignore[index]
    planned = sum(row["generations"] for row in plan["tasks"] if row["model"] == model)
    assert planned > 0 and not REQUESTS["profile-count"]  # a dry run spends nothing
    assert not list(tmp_path.glob("*.eval"))
    envelope = _profile(model, tmp_path)
    assert envelope["exit_code"] == 0, envelope["error"]
    assert len(REQUESTS["profile-count"]) == planned
    tasks = plan["tasks"]
    assert len(list(tmp_path.glob("*.eval"))) == len(tasks)  # one log per task, refs included
    assert Path(envelope["details"]["html"]).is_file()  # type: ignore[index]


def test_a_rerun_of_a_finished_study_calls_no_model(tmp_path: Path) -> None:
    model = script("profile-rerun", _answer)
    assert _profile(model, tmp_path)["exit_code"] == 0
    first = len(REQUESTS["profile-rerun"])
    again = _profile(model, tmp_path)
    assert again["exit_code"] == 0, again["error"]
    assert len(REQUESTS["profile-rerun"]) == first  # finished tasks are not redone


def test_a_study_cut_off_mid_way_completes_only_the_missing_samples(tmp_path: Path) -> None:
    from inspect_ai.log import read_eval_log

    flaky = FlakyLadder(fail_from=5)
    model = script("profile-resume", flaky)
    cut = _profile(model, tmp_path, "--retry-attempts", "0")
    assert cut["exit_code"] == 1 and "rerun the same command" in str(cut["error"])
    (ladder_log,) = [p for p in tmp_path.glob("*oracle-ladder*.eval")]
    log = read_eval_log(str(ladder_log))
    assert log.status == "error"
    kept = sum(1 for sample in log.samples or [] if sample.error is None)
    total = log.eval.dataset.samples or 0
    assert 4 <= kept < total
    s2b_calls = flaky.s2b_calls
    flaky.fail_from, flaky.ladder_calls = None, 0  # the server is back
    done = _profile(model, tmp_path)
    assert done["exit_code"] == 0, done["error"]
    assert flaky.ladder_calls == total - kept  # finished rollouts are kept, not asked again
    assert flaky.s2b_calls == s2b_calls  # the finished S2B-LM tasks are not run again


def test_lean_diagnostics_are_skipped_with_the_fix(tmp_path: Path) -> None:
    model = script("profile-lean", _answer)
    result = runner.invoke(
        app,
        ["profile", "--model", model, "--budget", "quick", "--dry-run", "--log-dir", str(tmp_path)],
    )
    assert result.exit_code == 0, result.output
    skipped = [line for line in result.output.splitlines() if line.startswith("skipped:")]
    assert len(skipped) == 1 and re.match(r"skipped: onng, prove, t2 \(", skipped[0])
    assert "--lean local:DIR" in skipped[0] and "gapscope lean setup DIR" in skipped[0]


def test_unknown_diagnostics_and_budgets_are_bad_input(tmp_path: Path) -> None:
    for flag, value in (("--diagnostics", "s2b,steer"), ("--budget", "huge")):
        result = runner.invoke(
            app, ["profile", flag, value, "--dry-run", "--log-dir", str(tmp_path)]
        )
        assert result.exit_code == 2 and value.split(",")[-1] in result.output


def _stub_model(monkeypatch: pytest.MonkeyPatch, stub: StubServer, name: str) -> str:
    """Inspect's ``openai-api`` provider pointed at ``stub``. Each test names its own model:
    Inspect keeps a model per name for the process, with the base URL it was opened with."""
    monkeypatch.setenv("STUB_BASE_URL", stub.url)
    monkeypatch.setenv("STUB_API_KEY", "test-key")
    return f"openai-api/stub/{name}"


def test_a_study_against_an_openai_compatible_server_retries_transient_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two requests first fail with HTTP 500: the client retries them, nothing is lost."""

    from gapscope.models import PREFLIGHT_REQUESTS

    def fail(n: int, body: dict[str, Any]) -> int | None:  # after both commands' preflights
        return 500 if n in (2 * PREFLIGHT_REQUESTS + 3, 2 * PREFLIGHT_REQUESTS + 26) else None

    with serve(StubServer(fail=fail)) as stub:
        model = _stub_model(monkeypatch, stub, "transient")
        plan = _profile(model, tmp_path, "--dry-run")["details"]["plan"]  # type: ignore[index]
        planned = sum(row["generations"] for row in plan["tasks"] if row["model"] == model)
        envelope = _profile(model, tmp_path)
    assert envelope["exit_code"] == 0, envelope["error"]
    # and the preflight's requests per command (the dry run's and the run's)
    assert stub.failures > 0 and stub.answered == planned + 2 * PREFLIGHT_REQUESTS


def test_a_server_that_refuses_some_samples_records_them_and_a_rerun_completes_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Requests for OracleLadder's C3 probes are refused (HTTP 400, not retried): those samples
    end as recorded failures, the rest finish; run again with the server fixed, only they are
    asked."""
    from inspect_ai.log import read_eval_log

    from gapscope.models import PREFLIGHT_REQUESTS

    def refuse_c3(n: int, body: dict[str, Any]) -> int | None:
        text = json.dumps(body["messages"])
        return 400 if "milestone answers" in text.lower() else None

    with serve(StubServer(fail=refuse_c3)) as stub:
        model = _stub_model(monkeypatch, stub, "refusing")
        cut = _profile(model, tmp_path, "--retry-attempts", "0")
        assert cut["exit_code"] == 1
        (ladder_log,) = tmp_path.glob("*oracle-ladder*.eval")
        log = read_eval_log(str(ladder_log))
        errors = [s.id for s in log.samples or [] if s.error is not None]
        finished = [s.id for s in log.samples or [] if s.error is None]
        assert errors and finished and len(errors) + len(finished) == log.eval.dataset.samples
        stub.fail, answered = (lambda n, body: None), stub.answered  # the server is fixed
        done = _profile(model, tmp_path)
    assert done["exit_code"] == 0, done["error"]
    # only the refused samples are asked again (and the preflight's requests)
    assert stub.answered - answered == len(errors) + PREFLIGHT_REQUESTS


def test_a_run_says_what_it_will_spend_and_warns_a_cpu_model_of_a_paper_budget(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from gapscope.app import kit
    from gapscope.app.preflight import Rate
    from gapscope.ladder.task import oracle_ladder

    monkeypatch.setattr(kit, "_has_gpu", lambda: False)
    task = oracle_ladder(families="bundled", k=2)  # the paper's 16,384 tokens per rollout
    kit.announce_plan(task, "gapscope/embedded", "ladder")
    err = capsys.readouterr().err
    generations = len(task.dataset) * 2
    assert f"{generations:,} generations x up to 16,384 tokens" in err
    assert f"= {generations * 16384:,} output tokens" in err
    assert "at 50.0 tokens/s (assumed for gapscope's engine on a CPU)" in err
    assert "warning: gapscope/embedded may take up to" in err
    assert "For a first look lower --max-tokens, -k / -n or --limit." in err  # a run's own flags
    kit.announce_plan(task, "openai-api/vllm/m", "ladder")  # not probed: no estimate
    assert "warning" not in (err := capsys.readouterr().err) and "no estimate" in err
    fast = Rate(1e6, "measured")  # a fast server: the same budget needs no warning
    kit.announce_plan(task, "openai-api/vllm/m", "ladder", fast)
    assert "warning" not in capsys.readouterr().err
    slow = Rate(20.0, "measured: 32 tokens in 1.6 s by the preflight request")
    kit.announce_plan(task, "openai-api/vllm/m", "ladder", slow)  # any model, not only ours
    assert "warning: openai-api/vllm/m may take up to" in capsys.readouterr().err


def test_the_report_says_when_answers_are_degenerate(tmp_path: Path) -> None:
    """A listener that says "same" to every query game and rollouts cut at the token cap are
    named in the notes, so a chance-level ZSCT or an all-UNRECOVERED table is not misread."""
    from inspect_ai.model import ModelOutput

    def lazy(messages: list[ChatMessage]) -> str | ModelOutput:
        if _answer(messages).startswith("Answer"):
            return "Answer: same"
        return ModelOutput.from_content(
            "lazy", "Let me think step by step about", stop_reason="max_tokens"
        )

    envelope = _profile(script("profile-lazy", lazy), tmp_path)
    assert envelope["exit_code"] == 0, envelope["error"]
    notes = envelope["details"]["notes"]  # type: ignore[index]
    assert any(
        n.startswith("S2B-LM, scripted/profile-lazy: the listener answered every query game")
        and "with same" in n
        for n in notes
    ), notes
    (ladder,) = [n for n in notes if n.startswith("OracleLadder, scripted/profile-lazy")]
    assert "16 of 16 rollouts have no \\boxed{} answer (16 hit the token cap)" in ladder


FIRST_LOOK = ("--limit", "1", "--max-tokens", "48")


def test_a_first_look_caps_samples_per_task_and_tokens_per_reply(tmp_path: Path) -> None:
    """``--limit`` runs every task's first N samples (Inspect's limit), ``--max-tokens`` caps
    each reply where a task's own cap is higher (the quick listener's 160 and rollout's 384;
    a speaker's 32-token messages stay 32), also in an S2B-LM episode that passes its own cap
    per call; the plan counts them, and every log records them."""
    from inspect_ai.log import read_eval_log

    from gapscope.models.scripted import CONFIGS

    model = script("profile-first-look", _answer)
    plan = _profile(model, tmp_path, "--dry-run", *FIRST_LOOK)["details"]["plan"]  # type: ignore[index]
    assert plan["first_look"] == {"limit": 1, "max_tokens": 48}
    assert {row["samples"] for row in plan["tasks"]} == {1}
    caps = {row["label"]: row["max_tokens"] for row in plan["tasks"] if row["model"] == model}
    assert sorted(set(caps.values())) == [32, 48]  # the speaker's 32 is not raised
    planned = sum(row["generations"] for row in plan["tasks"] if row["model"] == model)
    envelope = _profile(model, tmp_path, *FIRST_LOOK)
    assert envelope["exit_code"] == 0, envelope["error"]
    assert len(REQUESTS["profile-first-look"]) == planned
    asked = [config.max_tokens for config in CONFIGS["profile-first-look"]]
    assert set(asked) == {32, 48}
    for path in tmp_path.glob("*.eval"):
        log = read_eval_log(str(path))
        assert log.eval.config.limit == 1 and len(log.samples or []) == 1
        assert (log.eval.metadata or {})["first_look"] == {"limit": 1, "max_tokens": 48}
    shown = runner.invoke(
        app,
        ["profile", "--model", model, "--budget", "quick", "--diagnostics", "s2b,ladder",
         "--log-dir", str(tmp_path / "shown"), "--dry-run", *FIRST_LOOK],
    )  # fmt: skip
    assert "first look: samples per task at most 1, tokens per reply at most 48" in shown.output


def test_the_warning_advises_what_was_not_given_and_the_estimate_follows_the_caps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At a speed that takes hours, a quick profile is told to cap samples or replies (it was
    told to lower the budget to the ``--budget quick`` it already had); a paper one to take
    the quick budget first. A first look's plan is estimated at its caps."""
    from gapscope.app import profile
    from gapscope.app.preflight import Rate

    model = "openai-api/slow/m"
    slow = Rate(0.05, "measured", 1.0, 0.001)

    def slow_server(models: list[str], dry_run: bool, timeout: int) -> tuple[Any, Any]:
        return {}, {model: slow}

    monkeypatch.setattr(profile, "open_and_check", slow_server)

    def time_of(budget: str, *extra: str) -> dict[str, Any]:
        args = ["--budget", budget, "--dry-run", *extra]
        envelope = _profile(model, tmp_path, *args)
        return envelope["details"]["plan"]["time"]  # type: ignore[index,no-any-return]

    quick = time_of("quick")
    (warning,) = [line for line in quick["lines"] if line.startswith("warning:")]
    assert "--budget" not in warning
    assert warning.endswith(
        "For a first look cap it with --limit N (samples per task) and --max-tokens N (per reply)."
    )
    paper = time_of("paper")
    (warning,) = [line for line in paper["lines"] if line.startswith("warning:")]
    assert "lower the budget (`--budget quick`), or cap it with --limit N" in warning
    capped = time_of("quick", *FIRST_LOOK)
    (warning,) = [line for line in capped["lines"] if line.startswith("warning:")]
    assert warning.endswith("For a first look cap it with --max-tokens lower than 48 (per reply).")
    assert capped["models"][model]["up_to_seconds"] < quick["models"][model]["up_to_seconds"]
    assert capped["models"][model]["seconds"] < quick["models"][model]["seconds"]
