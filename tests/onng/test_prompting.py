"""Prompt content and the extraction of the JSON answer."""

from __future__ import annotations

import json

import pytest

from gapscope.onng.problemset import load_problem_set
from gapscope.onng.prompting import ParseStatus, build_prompt, extract_answer
from gapscope.onng.render import candidate_declaration, check_file, obfuscation

PS = load_problem_set()
CODE = 'theorem t (a : MyNat) : a = a := by\n  rfl -- {braces} "quoted"'


@pytest.mark.parametrize("lam", [0.0, 1.0])
def test_prompt_has_axioms_earlier_target_tactics(lam: float) -> None:
    obf = obfuscation(PS, lam, 0)
    problem = PS.problems[20]
    prompt = build_prompt(PS, obf, problem)
    for given in PS.given_theorems():
        assert obf.apply(given) in prompt
    for earlier in PS.problems[:20]:
        assert obf.apply(earlier.header()) in prompt
    assert obf.apply(problem.header()) in prompt
    assert PS.problems[21].name not in prompt
    for tactic in PS.allowed_tactics(problem.module):
        assert f"- `{obf.name(tactic)}" in prompt
    assert '"draft"' in prompt and '"code"' in prompt
    if lam == 1.0:
        assert "MyNat" not in prompt and "add_comm" not in prompt


def test_prompt_deterministic() -> None:
    obf = obfuscation(PS, 0.5, 3)
    p = PS.problems[5]
    assert build_prompt(PS, obf, p) == build_prompt(PS, obfuscation(PS, 0.5, 3), p)


@pytest.mark.parametrize(
    ("reply", "status"),
    [
        (json.dumps({"draft": "plan", "code": CODE}), ParseStatus.OK),
        (f"```json\n{json.dumps({'draft': 'p', 'code': CODE})}\n```\nDone.", ParseStatus.OK),
        (f"Sure! {json.dumps({'draft': 'p', 'code': CODE})} Hope it helps {{x}}", ParseStatus.OK),
        ('{"draft": "p", "code": "' + CODE.replace('"', '\\"') + '"}', ParseStatus.REPAIRED),
        ('{"draft": "p", "code": "by\n  rfl" }', ParseStatus.REPAIRED),
        ('{"draft": "only a plan"}', ParseStatus.MISSING_CODE),
        ('{"draft": "p", "code": ""}', ParseStatus.MISSING_CODE),
        ("theorem t : 1 = 1 := by rfl", ParseStatus.NO_JSON),
    ],
)
def test_extraction_status(reply: str, status: ParseStatus) -> None:
    answer = extract_answer(reply)
    assert answer.status is status
    if status is ParseStatus.OK:
        assert answer.code == CODE


@pytest.mark.parametrize("keys", [("Draft", "Code"), ("DRAFT", "CODE"), ("draft", "Code")])
def test_answer_keys_in_any_case(keys: tuple[str, str]) -> None:
    # the paper's models answer with "Draft" and "Code"
    answer = extract_answer(json.dumps({keys[0]: "the plan", keys[1]: CODE}))
    assert (answer.status, answer.draft, answer.code) == (ParseStatus.OK, "the plan", CODE)
    lenient = extract_answer(f'{{"{keys[0]}": "p", "{keys[1]}": "by\n  rfl" }}')
    assert (lenient.status, lenient.draft, lenient.code) == (ParseStatus.REPAIRED, "p", "by\n  rfl")


def test_extraction_strips_lean_fence_inside_code() -> None:
    reply = json.dumps({"draft": "", "code": "```lean\ntheorem t : True := trivial\n```"})
    assert extract_answer(reply).code == "theorem t : True := trivial"


def test_candidate_wrapping_and_guard() -> None:
    obf = obfuscation(PS, 1.0, 0)
    problem = PS.problems[0]
    name = obf.name(problem.name)
    full = f"theorem {name} (x q : X) : True := by\n  trivial"
    assert candidate_declaration(problem, obf, full) == full
    body = candidate_declaration(problem, obf, obf.name("rfl"))
    assert body.startswith(obf.apply(problem.header()) + " := by\n  ")
    assert candidate_declaration(problem, obf, "by rfl").endswith(":=\nby rfl")
    text = check_file(PS, obf, PS.problems[3], "by sorry")
    assert f"example : {obf.apply(PS.problems[3].closed_statement())} := @" in text
    assert obf.apply(PS.problems[2].declaration()) in text
    assert obf.apply(PS.problems[4].header()) not in text
    assert text.rstrip().endswith(f"end {obf.name('MyNat')}")
