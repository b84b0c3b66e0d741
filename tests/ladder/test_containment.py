"""Milestone answers in the model's own unaided attempts (Appendix Q): the match rule, the
rates by hand, and the readout of a scripted student's log through ``ladder report``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessage
from typer.testing import CliRunner

from gapscope.app.main import app
from gapscope.ladder.containment import ContainmentFamily, containment, contains, tokens
from gapscope.ladder.families import load_bundled
from gapscope.ladder.probes import Condition, build_probes
from gapscope.ladder.task import oracle_ladder
from gapscope.models.scripted import script


@pytest.mark.parametrize(
    ("answer", "text", "found"),
    [
        ("12", "so x = 12.", True),
        ("12", "the pair (12, 5)", True),
        ("12", "112", False),
        ("12", "12.5", False),
        ("12", "120", False),
        ("x", "let x = 2", True),
        ("x", "2x + 1", True),
        ("x", "the max", False),
        ("\\frac{1}{2}", "$\\dfrac{1}{2}$", True),
        ("(3, \\frac{\\pi}{2})", "\\left( 3,\\frac{\\pi}{2}\\right)", True),
        ("1000", "1\\,000", False),  # a thousands separator splits the number
        ("0.5", "\\frac{1}{2}", False),  # containment, not equivalence
        ("X", "x", False),
        ("", "anything", False),
    ],
)
def test_contains_is_a_token_bounded_match_of_normalised_strings(
    answer: str, text: str, found: bool
) -> None:
    assert contains(answer, text) is found


def test_tokens_drop_dollars_spacing_and_left_right() -> None:
    assert tokens("$\\left( a\\,b \\right)$ \\tfrac{3.5}{x1}") == (
        *("(", "a", "b", ")", "\\frac", "{", "3.5", "}", "{", "x", "1", "}"),
    )


def test_own_vs_cross_problem_rates_by_hand() -> None:
    families = [
        ContainmentFamily(
            "f1",
            "Find a + b where a = 3.",
            ("3", "7"),
            (True, False),
            ("a is 3, b is 4, so 7", "I get 10"),
        ),
        ContainmentFamily(
            "f2", "Compute x.", ("\\frac{1}{2}",), (True,), ("x = \\dfrac{1}{2}", "x = 1/2", "so 7")
        ),
        ContainmentFamily("f3", "What is y?", ("12", "$\\,$"), (False, True), ("y = 112",)),
    ]
    result = containment(families)
    assert (result.families, result.attempts, result.skipped) == (3, 6, 1)
    # own pairs: 2 per f1 answer, 3 for f2's, 1 for f3's; control: the other 4, 3, 5 attempts.
    # "3" is in f1's first attempt; "7" in f1's first and f2's third; 1/2 in f2's first;
    # "12" nowhere ("112" is one token). "3" is in f1's statement: not statement-novel.
    expected = {
        "all": (4, (3, 8), (1, 16)),
        "statement-novel": (3, (2, 6), (1, 12)),
        "solved alone": (2, (2, 5), (0, 7)),
        "not solved alone": (2, (1, 3), (1, 9)),
    }
    got = {
        name: (s.milestones, (s.own.hits, s.own.pairs), (s.control.hits, s.control.pairs))
        for name, s in result.subsets.items()
    }
    assert got == expected
    assert result.subsets["all"].own.rate == 3 / 8
    assert containment(families[:1]).subsets["all"].control.rate is None  # no other problem


LIMIT = 3
C1_REPLY = {
    # gs-001 tests 12 and 4; gs-002 (x-3)(x+3) and (x+3)(x-2); gs-003 3 and -1
    "gs-001-power-mod-13": "7^{12} = 1 mod 13 and 100 = 12 \\cdot 8 + 4, so \\boxed{9}.",
    "gs-002-rational-simplify": "Factor: (x-3)(x+3) over (x+3)(x-2) gives \\boxed{1}.",
    "gs-003-line-two-points": "The slope is 3, so \\boxed{y = 3x}.",
}


def test_ladder_report_reads_containment_from_the_c1_completions(tmp_path: Path) -> None:
    families = load_bundled().families[:LIMIT]
    assert [f.pid for f in families] == list(C1_REPLY)
    probes = {p.prompt: p for p in build_probes(families, (Condition.C1, Condition.S0))}

    def reply(messages: list[ChatMessage]) -> str:
        probe = probes[messages[-1].text]
        if probe.condition is Condition.C1:
            return C1_REPLY[probe.pid]
        # Stage 0: the first tested milestone of each family right, the second wrong
        return f"\\boxed{{{probe.gold if probe.milestone_index == 0 else '-987654321'}}}"

    log = inspect_eval(
        oracle_ladder(families="bundled", k=2, conditions="C1,S0", limit=LIMIT, verify_timeout=20),
        model=script("containment-student", reply),
        log_dir=str(tmp_path),
        display="none",
    )[0]
    assert log.status == "success", log.error
    runner = CliRunner()
    result = runner.invoke(app, ["ladder", "report", log.location, "--names", "s", "--json"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)["details"]["models"]["s"]["containment"]
    assert (found["families"], found["attempts"], found["skipped_milestones"]) == (3, 6, 0)
    # each answer against its family's 2 attempts and the other 4: every answer but -1 is in
    # its own attempts; only "3" (gs-003) turns up elsewhere, in gs-002's "x-3" twice; "3" is
    # in gs-003's statement "(3, 8)", so 5 of 6 are statement-novel
    subsets = {
        name: (s["milestones"], s["own"]["hits"], s["own"]["pairs"], s["control"]["hits"])
        for name, s in found["subsets"].items()
    }
    assert subsets == {
        "all": (6, 10, 12, 2),
        "statement-novel": (5, 8, 10, 0),
        "solved alone": (3, 6, 6, 2),
        "not solved alone": (3, 4, 6, 0),
    }
    assert found["subsets"]["all"]["control"] == {"hits": 2, "pairs": 24, "rate": 2 / 24}
    human = runner.invoke(app, ["ladder", "report", log.location])
    assert "own problem vs other problems" in human.output
    assert "10/12 (83.3%)" in human.output


def test_an_answer_is_not_found_from_its_pieces_apart() -> None:
    # every adjacent pair of "1 2 1" is in the first attempt, but not the run of three
    families = [
        ContainmentFamily("a", "?", ("1, 2, 1",), (True,), ("1, 2 and 2, 1",)),
        ContainmentFamily("b", "?", (), (), ("so 1, 2, 1",)),
    ]
    rates = containment(families).subsets["all"]
    assert (rates.own.hits, rates.own.pairs, rates.control.hits, rates.control.pairs) == (
        0,
        1,
        1,
        1,
    )
