"""The replication sets (Appendix N): their loaders, the teacher run over them, and the paired
exact tests of matched help against its controls."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gapscope.analysis.ladder import ModelRun, Rollout, build_report, specificity_tests
from gapscope.app.main import app
from gapscope.ladder.families import load_families
from gapscope.ladder.probes import Condition
from gapscope.ladder.problem_sets import load_problem_set
from gapscope.models.scripted import script
from gapscope.records import SourceError
from tests.ladder.test_compile import GOOD


def _jsonl(path: Path, rows: list[object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


def test_each_sets_fields_become_teacher_problems(tmp_path: Path) -> None:
    math500 = _jsonl(
        tmp_path / "math500.jsonl",
        [
            {
                "problem": "What is $2+3$?",
                "solution": "Adding, $2+3=\\boxed{5}$.",
                "answer": "5",
                "subject": "Prealgebra",
                "level": 1,
                "unique_id": "test/prealgebra/1.json",
            }
        ],
    )
    (problem,), errors = load_problem_set("math500", str(math500))
    assert not errors
    assert problem.pid == "math500-test/prealgebra/1.json"
    assert (problem.answer, problem.solution) == ("5", "Adding, $2+3=\\boxed{5}$.")
    # an AIME 2024 copy: the answer only inside a solution that is nothing but the box
    aime24 = _jsonl(
        tmp_path / "aime24.jsonl",
        [
            {"id": 7, "problem": "Find $n$.", "solution": "\\boxed{204}", "url": "u"},
            {"ID": "2024-II-3", "Problem": "Find $m$.", "Solution": "Since ... 33.", "Answer": 33},
        ],
    )
    problems, errors = load_problem_set("aime2024", str(aime24))
    assert not errors
    assert [(p.pid, p.answer, p.solution) for p in problems] == [
        ("aime2024-7", "204", ""),
        ("aime2024-2024-II-3", "33", "Since ... 33."),
    ]
    # an AIME 2025 copy: problem and answer only, so the line names the problem
    aime25 = tmp_path / "aime25.jsonl"
    aime25.write_text(
        "\n".join(
            [
                json.dumps({"answer": "70", "problem": "Find the sum of the bases."}),
                "not json",
                json.dumps({"answer": "16"}),
                json.dumps({"problem": "No answer anywhere.", "solution": "It is large."}),
                json.dumps({"answer": "588", "problem": "Find the area."}),
            ]
        ),
        "utf-8",
    )
    problems, errors = load_problem_set("aime2025", str(aime25))
    assert [(p.pid, p.answer) for p in problems] == [("aime2025-1", "70"), ("aime2025-5", "588")]
    assert errors == [
        "line 2: not valid JSON (Expecting value, column 1)",
        "line 3 (aime2025-3): problem: missing (looked for problem, Problem, question, Question)",
        "line 4 (aime2025-4): answer: missing, and the solution has no \\boxed{} answer to read",
    ]


def test_a_repeated_id_keeps_the_first_and_unknown_sets_and_files_are_errors(
    tmp_path: Path,
) -> None:
    path = _jsonl(tmp_path / "a.jsonl", [{"id": 1, "problem": p, "answer": "1"} for p in "xy"])
    problems, errors = load_problem_set("aime2024", str(path))
    assert [p.problem for p in problems] == ["x"]
    assert errors == ["line 2 (aime2024-1): pid: duplicate pid (first seen on line 1, kept there)"]
    with pytest.raises(ValueError, match="unknown problem set 'gsm8k'; choose from math500"):
        load_problem_set("gsm8k", str(path))
    with pytest.raises(SourceError, match="no such file"):
        load_problem_set("math500", str(tmp_path / "missing.jsonl"))


def test_compile_reads_a_replication_set(tmp_path: Path) -> None:
    problems = _jsonl(
        tmp_path / "aime24.jsonl", [{"id": 60, "problem": "Find $n$.", "solution": "\\boxed{204}"}]
    )
    teacher = script("replication-teacher", lambda messages: json.dumps(GOOD))
    out = tmp_path / "families.jsonl"
    args = ["ladder", "compile", "--teacher", teacher, "--problems", str(problems)]
    result = CliRunner().invoke(
        app,
        [*args, "--problem-set", "aime2024", "--out", str(out), "--json"]
        + ["--log-dir", str(tmp_path)],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["details"]["funnel"]["kept"] == 1
    (family,) = load_families(out).families
    assert (family.pid, family.parent_answer) == ("aime2024-60", "204")
    missing = CliRunner().invoke(
        app,
        [*args[:-1], str(tmp_path / "none.jsonl"), "--problem-set", "aime2024", "--out", str(out)],
    )
    assert missing.exit_code == 2 and "no such file" in missing.output


def _aime_like_run() -> ModelRun:
    """38 families, one rollout per condition, solved where the sets below say.

    C2 solves 0-16 (17) and C2-random 14-18 (5): 14 C2 only, 2 random only. C2-generic
    solves 13-17 (5): 13 C2 only, 1 generic only. C3 solves 0-17 (18), C3-mismatched 0-9 and
    20-21 (12): 8 C3 only, 2 mismatched only.
    """
    solved = {
        Condition.C1: set[int](),
        Condition.C2: set(range(17)),
        Condition.C2_RANDOM: set(range(14, 19)),
        Condition.C2_GENERIC: set(range(13, 18)),
        Condition.C3: set(range(18)),
        Condition.C3_MISMATCHED: set(range(10)) | {20, 21},
    }
    rollouts = [
        Rollout(f"f{i:02d}", condition, None, i in families)
        for i in range(38)
        for condition, families in solved.items()
    ]
    return ModelRun("aime", "aime.eval", rollouts, {f"f{i:02d}": 2 for i in range(38)})


def test_matched_help_against_each_control_by_exact_mcnemar() -> None:
    tests = {(t.matched, t.control): t for t in specificity_tests(_aime_like_run())}
    random = tests[(Condition.C2, Condition.C2_RANDOM)]
    generic = tests[(Condition.C2, Condition.C2_GENERIC)]
    mismatched = tests[(Condition.C3, Condition.C3_MISMATCHED)]
    assert (random.test.n, random.test.b, random.test.c) == (38, 14, 2)
    # 2 P(X <= 2), X ~ Bin(16, 1/2) = 2 (1 + 16 + 120) / 2^16; 2 (1 + 14) / 2^14
    assert random.test.p_value == 274 / 2**16 and round(random.test.p_value, 3) == 0.004
    assert (generic.test.b, generic.test.c) == (13, 1)
    assert generic.test.p_value == 30 / 2**14 and round(generic.test.p_value, 3) == 0.002
    assert (mismatched.test.b, mismatched.test.c) == (8, 2)
    assert mismatched.test.p_value == 2 * (1 + 10 + 45) / 2**10
    # Holm: the smallest p times 3, the next times 2, the largest times 1
    assert generic.p_holm == pytest.approx(3 * 30 / 2**14)
    assert random.p_holm == pytest.approx(2 * 274 / 2**16)
    assert mismatched.p_holm == pytest.approx(112 / 1024)
    details = build_report([_aime_like_run()], n_resamples=100).to_dict()
    assert details["models"]["aime"]["specificity_tests"][0] == {
        "matched": "C2",
        "control": "C2-random",
        "families": 38,
        "matched_only": 14,
        "control_only": 2,
        "p_value": 274 / 2**16,
        "p_holm": pytest.approx(2 * 274 / 2**16),
    }


def test_a_run_without_controls_has_no_specificity_tests() -> None:
    run = _aime_like_run()
    ladder_only = [r for r in run.rollouts if r.condition in (Condition.C1, Condition.C2)]
    assert specificity_tests(ModelRun("x", "x.eval", ladder_only, run.tested)) == []
