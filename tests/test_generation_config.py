"""Every diagnostic sends its own decoding settings and the log records them.

A task that leaves temperature unset inherits the server's default (0.8 on llama.cpp), which
silently turns greedy decoding into sampling and changes the scores.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import GenerateConfig

import gapscope.onng.task as onng_task
import gapscope.prove.task as prove_task
from gapscope.ladder.compile_task import ladder_compile
from gapscope.ladder.task import oracle_ladder
from gapscope.models.scripted import script
from gapscope.s2b.task import s2b_lm
from tests.onng.test_task import FakeLean as OnngFakeLean
from tests.prove.test_task import FakeLean as ProveFakeLean
from tests.prove.test_task import _dataset as prove_dataset

TaskBuilder = Callable[[Path, pytest.MonkeyPatch], Task]


def _compile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Task:
    problems = tmp_path / "problems.jsonl"
    problems.write_text('{"problem": "1+1?", "answer": "2"}\n', encoding="utf-8")
    return ladder_compile(problems=str(problems))


def _onng(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Task:
    monkeypatch.setattr(onng_task, "open_checker", lambda spec, **_: OnngFakeLean())
    return onng_task.onng(lams="0", limit=1, lean="fake")


def _prove(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Task:
    monkeypatch.setattr(prove_task, "open_checker", lambda spec, **_: ProveFakeLean())
    return prove_task.prove(dataset=str(prove_dataset(tmp_path)), n=2, k="1,2", lean="fake")


TASKS: dict[str, tuple[TaskBuilder, float, float]] = {
    # greedy where the protocol scores one answer per item
    "s2b": (lambda t, m: s2b_lm(preset="demo", seeds=1), 0.0, 1.0),
    "ladder-compile": (_compile, 0.0, 1.0),
    "onng": (_onng, 0.0, 1.0),
    # sampled rollouts / pass@k attempts: the task's temperature argument, no nucleus cut
    "ladder": (lambda t, m: oracle_ladder(limit=2, k=1), 0.7, 1.0),
    "prove": (_prove, 1.0, 1.0),
}


@pytest.mark.parametrize("name", sorted(TASKS))
def test_every_task_sets_temperature_and_top_p(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build, temperature, top_p = TASKS[name]
    config = build(tmp_path, monkeypatch).config
    assert (config.temperature, config.top_p) == (temperature, top_p)


def _model_call_configs(log: EvalLog) -> list[GenerateConfig]:
    assert log.samples is not None
    return [e.config for s in log.samples for e in s.events if e.event == "model"]


def test_s2b_decoding_reaches_the_log_and_every_model_call(tmp_path: Path) -> None:
    """S2B calls the model from its own solver with per-call stops: the task's greedy
    setting must survive that merge on every call."""
    model = script("greedy-listener", lambda messages: "Answer: same")
    log = inspect_eval(
        s2b_lm(preset="demo", seeds=1), model=model, log_dir=str(tmp_path), display="none"
    )[0]
    assert log.status == "success", log.error
    assert (log.plan.config.temperature, log.plan.config.top_p) == (0.0, 1.0)
    calls = _model_call_configs(log)
    assert calls
    assert all(c.temperature == 0.0 and c.top_p == 1.0 and c.stop_seqs for c in calls)
