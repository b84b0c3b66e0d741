"""Teacher compilation: parsing, validation, regeneration on failure, funnel counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from inspect_ai.model import ChatMessage
from typer.testing import CliRunner

from gapscope.app.main import app
from gapscope.ladder.compile import (
    CompileError,
    Stage,
    TeacherProblem,
    build_family,
    funnel_counts,
    load_problems,
    parse_reply,
)
from gapscope.ladder.families import load_families
from gapscope.ladder.schema import MilestoneType
from gapscope.models.scripted import script

PROBLEM = TeacherProblem(
    pid="sq",
    problem="Find the sum of the squares of the roots of x^2 - 5x + 6 = 0.",
    answer="13",
    solution="The roots are 2 and 3, so 4 + 9 = 13.",
)


def _milestone(schema: str, type_: str, answer: str, what: str) -> dict[str, str]:
    return {
        "schema": schema,
        "type": type_,
        "description": what,
        "instruction": "Put the answer in \\boxed{}.",
        "answer": answer,
    }


GOOD = {
    "milestones": [
        _milestone("SET", "KEY_MOVE", "\\{2, 3\\}", "Find the roots of x^2 - 5x + 6 = 0."),
        _milestone("NUMBER", "COMPUTE", "5", "Find the sum of the roots of x^2 - 5x + 6 = 0."),
        _milestone("NUMBER", "INTEGRATE", "13", "Add the squares of the roots."),
    ]
}
LEAKY = {
    "milestones": [
        _milestone("NUMBER", "COMPUTE", "4", "Square the smaller root 2."),
        _milestone("NUMBER", "COMPUTE", "13", "Compute 2^2 + 3^2."),
        _milestone("NUMBER", "INTEGRATE", "13", "State the answer."),
    ]
}


def test_a_valid_reply_builds_a_family_in_the_released_format() -> None:
    family = build_family(
        PROBLEM, parse_reply("Here it is:\n```json\n" + json.dumps(GOOD) + "\n```")
    )
    assert family.pid == "sq" and family.gold_answer == "13"
    assert [m.type for m in family.tested_milestones] == [
        MilestoneType.KEY_MOVE,
        MilestoneType.COMPUTE,
    ]
    first = family.milestones[0]
    assert first.prompt.startswith("You are solving one milestone from a larger problem.")
    assert "Milestone:\nFind the roots of x^2 - 5x + 6 = 0." in first.prompt
    assert PROBLEM.problem in family.parent_prompt


@pytest.mark.parametrize(
    ("reply", "stage", "message"),
    [
        ("", Stage.REPLIED, "empty"),
        ("I would rather not.", Stage.PARSED, "no JSON object"),
        ('{"milestones": []}', Stage.SCHEMA_VALID, "non-empty list"),
        (
            json.dumps({"milestones": [{**GOOD["milestones"][0], "schema": "GRAPH"}]}),
            Stage.SCHEMA_VALID,
            "milestone 1: schema 'GRAPH'",
        ),
        (
            json.dumps({"milestones": [{**GOOD["milestones"][1], "answer": " "}]}),
            Stage.SCHEMA_VALID,
            "milestone 1: field 'answer' is empty",
        ),
        (json.dumps({"milestones": GOOD["milestones"][:2]}), Stage.STRUCTURED, "INTEGRATE"),
        (
            json.dumps({"milestones": GOOD["milestones"][1:]}),
            Stage.STRUCTURED,
            "at least two milestones",
        ),
        (json.dumps(LEAKY), Stage.LEAK_FREE, "milestone 2"),
    ],
)
def test_rejections_name_their_stage(reply: str, stage: Stage, message: str) -> None:
    with pytest.raises(CompileError, match=message) as info:
        build_family(PROBLEM, parse_reply(reply))
    assert info.value.stage is stage


def test_funnel_counts_survivors_per_stage() -> None:
    counts = funnel_counts([None, None, Stage.LEAK_FREE, Stage.PARSED, Stage.SCHEMA_VALID])
    assert counts == {
        "candidates": 5,
        "replied": 5,
        "parsed": 4,
        "schema_valid": 3,
        "structured": 3,
        "leak_free": 2,
        "kept": 2,
    }


def test_load_problems_reports_bad_lines(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text('{"problem": "1+1?", "answer": "2"}\nnot json\n{"problem": "x"}\n')
    problems, errors = load_problems(path)
    assert len(problems) == 1 and len(problems[0].pid) == 12
    assert errors == [
        "line 2: not valid JSON (Expecting value, column 1)",
        "line 3: answer: missing",
    ]


def test_compile_cli_regenerates_and_reports_the_funnel(tmp_path: Path) -> None:
    problems = tmp_path / "problems.jsonl"
    rows = [
        {**PROBLEM.__dict__, "pid": "first-try"},
        {**PROBLEM.__dict__, "pid": "second-try"},
        {**PROBLEM.__dict__, "pid": "always-leaks"},
    ]
    # the second problem fails once (schema), the third always leaks
    replies = {"first-try": [GOOD], "second-try": [{"milestones": "none"}, GOOD]}

    def scripted(messages: list[ChatMessage]) -> str:
        attempt = sum(m.role == "assistant" for m in messages)
        for pid, answers in replies.items():
            if f"pid:{pid}" in messages[0].text:
                return json.dumps(answers[min(attempt, len(answers) - 1)])
        return json.dumps(LEAKY)

    problems.write_text(
        "".join(json.dumps({**r, "solution": f"pid:{r['pid']}"}) + "\n" for r in rows)
    )
    model = script("teacher", scripted)
    out = tmp_path / "families.jsonl"
    result = CliRunner().invoke(
        app,
        ["ladder", "compile", "--teacher", model, "--problems", str(problems)]
        + ["--out", str(out), "--max-attempts", "2", "--json", "--log-dir", str(tmp_path)],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)["details"]
    assert summary["funnel"] == {
        "candidates": 3,
        "replied": 3,
        "parsed": 3,
        "schema_valid": 3,
        "structured": 3,
        "leak_free": 2,
        "kept": 2,
        "rejected_attempts": 3,  # one schema failure, two leaks
    }
    loaded = load_families(out)
    assert not loaded.problems
    assert sorted(f.pid for f in loaded.families) == ["first-try", "second-try"]


def test_compile_refuses_to_write_families_over_its_problems(tmp_path: Path) -> None:
    problems = tmp_path / "problems.jsonl"
    problems.write_text(json.dumps(PROBLEM.__dict__) + "\n")
    before = problems.read_text()
    model = script("teacher", lambda messages: json.dumps(GOOD))
    args = ["ladder", "compile", "--teacher", model, "--problems", str(problems)]
    result = CliRunner().invoke(
        app, [*args, "--out", str(problems), "--json", "--log-dir", str(tmp_path / "logs")]
    )
    assert result.exit_code == 2, result.output
    assert f"input --problems {problems}" in json.loads(result.stdout)["error"]
    assert problems.read_text() == before and not (tmp_path / "logs").exists()
