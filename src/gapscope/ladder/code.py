"""The code-generation pilot (seed Appendix O): the help ladder on programming problems.

Helper functions play the milestones' part and test execution the verifier's. A problem has a
statement, tests, a reference solution and helpers, each helper with a signature, a one-line
description, its code and its own tests. Three conditions, one user turn each:

* ``no-help``: the statement alone (C1);
* ``helper-plan``: + the helpers' signatures and descriptions, never their code (C2);
* ``verified-helpers``: + the helpers' code, already defined, each one having passed its own
  tests in the sandbox before the run (C3: the verified milestone answers).

Problems load from our JSONL (the bundled set, ``ladder/data/code_pilot.jsonl``) or from
LiveCodeBench-style records (``question_content``, ``public_test_cases`` ...), the two shapes
told apart per record; a bad record is reported with its line and field and skipped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from importlib import resources
from pathlib import Path
from typing import Any

from gapscope.ladder.probes import template
from gapscope.ladder.sandbox import CodeTest, Isolation, Limits, RunResult, run_tests
from gapscope.records import RecordProblem, read_source


class CodeCondition(StrEnum):
    """How much help an attempt gets."""

    NO_HELP = "no-help"
    HELPER_PLAN = "helper-plan"
    VERIFIED_HELPERS = "verified-helpers"


CODE_CONDITIONS: tuple[CodeCondition, ...] = tuple(CodeCondition)


@dataclass(frozen=True)
class Helper:
    """One helper function: what the plan shows (signature, description) and its code."""

    name: str
    signature: str
    description: str
    code: str
    tests: tuple[CodeTest, ...]


@dataclass(frozen=True)
class CodeProblem:
    """A programming problem; ``entry`` is the function call tests call (None: stdin tests).

    ``signature`` is what the statement asks for (``def f(xs: list[int]) -> int``, or a
    LiveCodeBench starter ``class Solution``); None for stdin problems.
    """

    pid: str
    statement: str
    entry: str | None
    signature: str | None
    tests: tuple[CodeTest, ...]
    reference_solution: str | None
    helpers: tuple[Helper, ...]


@dataclass(frozen=True)
class CodeLoad:
    """The problems that loaded and a problem report for each record that did not."""

    problems: list[CodeProblem]
    skipped: list[RecordProblem]


def load_code_problems(source: str | Path) -> CodeLoad:
    """Problems from a local JSONL file (ours or LiveCodeBench-style) or a Hub dataset id."""
    rows = read_source(source, split="test", what="programming problems")
    problems: list[CodeProblem] = []
    skipped = list(rows.bad_lines)
    for line, record in rows.rows:
        pid = _pid(record)
        try:
            if not isinstance(record, dict):
                raise ValueError(f"expected a JSON object, got {type(record).__name__}")
            problem = _livecodebench(record) if "question_content" in record else _ours(record)
        except (KeyError, TypeError, ValueError, json.JSONDecodeError) as exc:
            field = exc.args[0] if isinstance(exc, KeyError) else None
            message = "missing" if isinstance(exc, KeyError) else str(exc)
            skipped.append(RecordProblem(line, pid, field, message))
            continue
        problems.append(problem)
    return CodeLoad(problems, skipped)


def _pid(record: object) -> str | None:
    if isinstance(record, dict) and (record.get("pid") or record.get("question_id")):
        return str(record.get("pid") or record.get("question_id"))
    return None


def load_bundled_code() -> CodeLoad:
    """The ten problems written for this project (each with reference, helpers and tests)."""
    path = resources.files("gapscope.ladder") / "data" / "code_pilot.jsonl"
    with resources.as_file(path) as file:
        return load_code_problems(file)


def _tests(records: Sequence[Mapping[str, Any]]) -> tuple[CodeTest, ...]:
    return _some(tuple(CodeTest(t["input"], t["output"]) for t in records))


def _some(tests: Sequence[CodeTest]) -> tuple[CodeTest, ...]:
    """The tests, refused when there are none: a problem nothing can fail proves nothing."""
    if not tests:
        raise ValueError("needs at least one test")
    return tuple(tests)


def _helpers(records: Sequence[Mapping[str, Any]]) -> tuple[Helper, ...]:
    return tuple(
        Helper(
            name=str(h["name"]),
            signature=str(h["signature"]),
            description=str(h["description"]),
            code=str(h["code"]),
            tests=_tests(h["tests"]),
        )
        for h in records
    )


def _ours(record: Mapping[str, Any]) -> CodeProblem:
    entry = record.get("entry")
    return CodeProblem(
        pid=str(record["pid"]),
        statement=str(record["statement"]),
        entry=str(entry) if entry else None,
        signature=str(record["signature"]) if entry else None,
        tests=_tests(record["tests"]),
        reference_solution=record.get("reference_solution"),
        helpers=_helpers(record.get("helpers", [])),
    )


def _livecodebench(record: Mapping[str, Any]) -> CodeProblem:
    """A LiveCodeBench record: tests are JSON strings, functional inputs one JSON per line.

    Private tests that are not plain JSON (the release compresses and pickles them) are
    refused rather than unpickled: unpickling runs code from the file.
    """
    metadata = _json_field(record.get("metadata") or "{}", "metadata")
    entry = metadata.get("func_name") if isinstance(metadata, dict) else None
    tests: list[CodeTest] = []
    for key in ("public_test_cases", "private_test_cases"):
        raw = record.get(key)
        if not raw:
            continue
        cases = _json_field(raw, key)
        for case in cases:
            if case.get("testtype", "stdin") == "functional":
                if not entry:
                    raise ValueError("functional tests need metadata.func_name")
                args = [json.loads(line) for line in str(case["input"]).splitlines() if line]
                tests.append(CodeTest(args, json.loads(case["output"])))
            else:
                tests.append(CodeTest(str(case["input"]), str(case["output"])))
    title = record.get("question_title")
    statement = str(record["question_content"])
    return CodeProblem(
        pid=str(record["question_id"]),
        statement=f"{title}\n\n{statement}" if title else statement,
        entry=str(entry) if entry else None,
        signature=(record.get("starter_code") or None) if entry else None,
        tests=_some(tests),
        reference_solution=record.get("reference_solution"),
        helpers=_helpers(record.get("helpers") or []),
    )


def _json_field(raw: Any, key: str) -> Any:
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        raise ValueError(
            f"{key} is not plain JSON (compressed or pickled tests are not read)"
        ) from None


def interface(problem: CodeProblem) -> str:
    """What the statement asks the program to provide: a function, or stdin -> stdout."""
    if problem.entry is None:
        return template("code_stdin")
    return template("code_function").format(signature=problem.signature or problem.entry)


def code_prompt(problem: CodeProblem, condition: CodeCondition) -> str:
    """The user turn of ``problem`` under ``condition``."""
    base = template("code_no_help").format(
        statement=problem.statement, interface=interface(problem)
    )
    if condition is CodeCondition.NO_HELP:
        return base
    if condition is CodeCondition.HELPER_PLAN:
        plan = "\n".join(
            template("code_plan_item").format(
                number=i + 1, signature=h.signature, text=h.description
            )
            for i, h in enumerate(problem.helpers)
        )
        return template("code_helper_plan").format(problem=base, plan=plan)
    return template("code_verified_helpers").format(problem=base, code=helper_code(problem))


def helper_code(problem: CodeProblem) -> str:
    """The helpers' code as one block, in plan order."""
    return "\n\n".join(h.code.strip() for h in problem.helpers)


def program_to_run(problem: CodeProblem, condition: CodeCondition, program: str) -> str:
    """The attempt as run: with verified helpers the helpers come first (the prompt says they
    are defined), so a program that redefines one still runs its own."""
    if condition is CodeCondition.VERIFIED_HELPERS:
        return f"{helper_code(problem)}\n\n\n{program}"
    return program


_FENCE = re.compile(r"```[ \t]*(?:python3?|py)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)


def extract_program(reply: str) -> str | None:
    """The last fenced code block of a reply; None when it has none (a format failure)."""
    blocks = _FENCE.findall(reply)
    return blocks[-1] if blocks else None


def check_helpers(
    problem: CodeProblem, limits: Limits = Limits(), layer: Isolation | None = None
) -> list[tuple[str, RunResult]]:
    """Each helper's own tests, run in the sandbox (``layer``: where, as for
    :func:`~gapscope.ladder.sandbox.run_tests`) on the helper block as the model is shown it
    (a helper may call an earlier one): what "verified" means."""
    code = helper_code(problem)
    return [(h.name, run_tests(code, h.tests, h.name, limits, layer)) for h in problem.helpers]
