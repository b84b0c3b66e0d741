"""Absurd task parameters are refused by the @task functions, naming the parameter, so
``inspect eval -T`` and ``gapscope run`` get the same message (exit 2 for the CLI)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gapscope.app.main import app
from gapscope.ladder.code_task import ladder_code
from gapscope.ladder.compile_task import ladder_compile
from gapscope.ladder.task import oracle_ladder
from gapscope.onng.task import onng
from gapscope.prove.task import prove
from gapscope.s2b.task import s2b_lm
from gapscope.t2.task import t2

runner = CliRunner(env={"COLUMNS": "400"})


@pytest.mark.parametrize(
    ("task", "args", "message"),
    [
        (s2b_lm, {"seeds": "abc"}, "seeds must be a number, got 'abc'"),
        (s2b_lm, {"max_tokens": 0}, "max_tokens must be >= 1, got 0"),
        (oracle_ladder, {"max_tokens": -5}, "max_tokens must be >= 1, got -5"),
        (oracle_ladder, {"temperature": -1}, "temperature must be a finite number >= 0"),
        (oracle_ladder, {"temperature": math.nan}, "temperature must be a finite number >= 0"),
        (oracle_ladder, {"limit": -1}, "limit must be >= 1, got -1"),
        (oracle_ladder, {"limit": 0}, "limit must be >= 1, got 0"),
        (oracle_ladder, {"k": "8x"}, "k must be a number, got '8x'"),
        (oracle_ladder, {"k": 10**9}, "more than the 1,000,000 one run may ask for"),
        (prove, {"dataset": "-", "temperature": math.inf}, "temperature must be a finite"),
        (t2, {"data": "-", "top_p": 2}, "top_p must be a finite number in (0, 1], got 2.0"),
        (t2, {"data": "-", "check_timeout": -1}, "check_timeout must be a finite number > 0"),
        (onng, {"limit": 0}, "limit must be >= 1, got 0"),
        (ladder_compile, {"problems": "-", "max_attempts": "x"}, "max_attempts must be a"),
        (
            oracle_ladder,
            {"conditions": "C1,C9"},
            "unknown condition(s) ['C9']; choose from C1, C2, C3, C2-random, C2-generic, "
            "C3-mismatched, S0, 'all' or 'ladder'",
        ),
        (
            ladder_code,
            {"conditions": ""},
            "unknown condition(s) ''; choose from no-help, helper-plan, verified-helpers or 'all'",
        ),
    ],
)
def test_a_task_names_the_parameter_it_refuses(
    task: Callable[..., Any], args: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError) as refused:
        task(**args)
    assert message in str(refused.value)


def test_prove_caps_the_generations_of_one_run(tmp_path: Path) -> None:
    data = tmp_path / "problems.jsonl"
    record = {"name": "p", "split": "test", "header": "import Mathlib", "formal_statement": ""}
    record["formal_statement"] = "theorem p : 1 = 1 := by"
    data.write_text(json.dumps(record) + "\n")
    with pytest.raises(ValueError, match=r"1 problems x n=100000000000 = 100,000,000,000"):
        prove(dataset=str(data), n=100_000_000_000, k="1")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tau", "4", "-k", "1"], "--tau 4 needs 4 correct rollouts of 1"),
        (["-k", "1000000000"], "more than the 1,000,000 one run may ask for"),
    ],
)
def test_run_ladder_refuses_settings_no_run_can_use(
    args: list[str], message: str, tmp_path: Path
) -> None:
    result = runner.invoke(
        app, ["run", "ladder", "--bundled", *args, "--log-dir", str(tmp_path), "--json"]
    )
    assert result.exit_code == 2, result.output
    assert message in json.loads(result.stdout)["error"]
    assert not list(tmp_path.glob("*.eval"))


def test_run_ladder_refuses_no_tokens_before_starting(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["run", "ladder", "--bundled", "--max-tokens", "0", "--log-dir", str(tmp_path)]
    )
    assert result.exit_code == 2 and "--max-tokens" in result.output
    assert not list(tmp_path.glob("*.eval"))
