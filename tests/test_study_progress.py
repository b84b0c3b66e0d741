"""The study's progress line counts the study's tasks and samples, not eval_set's attempts: a
task whose samples failed is retried by ``eval_set`` (the hooks see both attempts and every
sample run again), and the line still ends at ``tasks 1/1, samples 16/16``, where counting
attempts read ``tasks 2/1, samples 20/16``."""

from __future__ import annotations

import re
from pathlib import Path

from inspect_ai.model import ChatMessage

from gapscope.app.study import Study, StudyProgress, StudyTask, plan_of, run_study
from gapscope.ladder.task import oracle_ladder
from gapscope.models.scripted import script

FAILING = 4
"""The student's first replies that raise: their samples fail on the first attempt."""


def test_a_retried_task_counts_once_and_its_samples_once(tmp_path: Path) -> None:
    calls = [0]

    def student(messages: list[ChatMessage]) -> str:
        calls[0] += 1
        if calls[0] <= FAILING:
            raise RuntimeError("the first attempt's server hiccup")
        return "\\boxed{1}"

    model = script("retried-study", student)
    task = oracle_ladder(families="bundled", k=1, limit=2, max_tokens=16)
    study = Study([StudyTask(plan_of(task, model, "ladder", "ladder"), task, model)])
    lines: list[str] = []
    progress = StudyProgress(study, lines.append, every_s=3600)
    ending = run_study(
        study, tmp_path, progress, retry_attempts=2, retry_wait=0.1, max_connections=1
    )
    assert ending.complete, ending.lines()
    total = progress.total_samples
    assert calls[0] == total + FAILING  # the failed samples did run a second time
    first, last = lines[0], lines[-1]  # the line each attempt's end shows
    assert re.search(rf"tasks 0/1, samples {total - FAILING}/{total} \({FAILING} failed\)", first)
    assert re.search(rf"tasks 1/1, samples {total}/{total},", last), lines
    assert "failed" not in last
