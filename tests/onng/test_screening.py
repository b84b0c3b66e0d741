"""O-NNG's static checks under hostile size: capped with their own verdict, off the event loop."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessage

import gapscope.onng.task as onng_task
from gapscope.models.scripted import script
from gapscope.onng.checking import CODE_TOO_LONG, MAX_CODE_CHARS, StaticCheck, static_check
from gapscope.onng.problemset import load_problem_set
from gapscope.onng.render import obfuscation
from tests.onng.test_task import FakeLean


def _static(code: str) -> StaticCheck:
    problem_set = load_problem_set()
    problem = next(p for p in problem_set.problems if p.name == "tutorial_rfl")
    obf = obfuscation(problem_set, 0.0, 0)
    return static_check(problem_set, obf, problem, json.dumps({"draft": "", "code": code}))


def test_code_past_the_cap_is_too_long_and_not_screened() -> None:
    # the 56 KB reply of the hostile round: unclosed `@[simp` runs hiding nothing but slow
    hostile = ("@[simp " * 8000)[:56_000]
    static = _static(hostile)
    assert static.status == CODE_TOO_LONG and not static.needs_lean
    assert static.detail == (
        f"the code has 56000 characters, more than {MAX_CODE_CHARS}: not screened, not checked"
    )
    # at the cap the code is screened and checked as usual
    assert _static("rfl" + " " * (MAX_CODE_CHARS - 3)).needs_lean


def test_the_static_checks_run_off_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    on_loop: list[bool] = []

    def recording(*args: object) -> StaticCheck:
        try:
            asyncio.get_running_loop()
            on_loop.append(True)
        except RuntimeError:  # a worker thread has no running loop
            on_loop.append(False)
        return static_check(*args)  # type: ignore[arg-type]

    def reply(messages: list[ChatMessage]) -> str:
        return json.dumps({"draft": "", "code": "rfl"})

    monkeypatch.setattr(onng_task, "static_check", recording)
    monkeypatch.setattr(onng_task, "open_checker", lambda spec, **_: FakeLean())
    task = onng_task.onng(lams="0", modules="tutorial", limit=2, lean="fake")
    log = inspect_eval(task, model=script("off-loop", reply), log_dir=str(tmp_path), display="none")
    assert log[0].status == "success", log[0].error
    assert on_loop == [False, False]
