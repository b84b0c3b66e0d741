"""Milestone answers in the model's own unaided attempts (Appendix Q): both match rules (the
authors' ``present()``, the default, and the stricter token match), the rates by hand, the
released families' statement counts, and the readout of a scripted student's log through
``ladder report``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessage
from typer.testing import CliRunner

from gapscope.app.main import app
from gapscope.ladder.containment import (
    ContainmentFamily,
    Match,
    contains,
    contains_paper,
    contains_token,
    measure_containment,
    tokens,
)
from gapscope.ladder.families import load_bundled
from gapscope.ladder.probes import Condition, build_probes
from gapscope.ladder.strip_string import MalformedAnswer, strip_string
from gapscope.ladder.task import oracle_ladder
from gapscope.models.scripted import script
from tests.environment import SharedData


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
    assert contains_token(answer, text) is found
    assert contains(answer, text, Match.TOKEN) is found


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
    result = measure_containment(families, Match.TOKEN)
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
    assert measure_containment(families[:1], Match.TOKEN).subsets["all"].control.rate is None


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

    def readout(*match: str) -> dict[str, Any]:
        args = ["ladder", "report", log.location, "--names", "s", "--json", *match]
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        found: dict[str, Any] = json.loads(result.stdout)["details"]["models"]["s"]["containment"]
        return found

    def table(found: dict[str, Any]) -> dict[str, tuple[int, int, int, int]]:
        return {
            name: (s["milestones"], s["own"]["hits"], s["own"]["pairs"], s["control"]["hits"])
            for name, s in found["subsets"].items()
        }

    token = readout("--match", "token")
    assert token["match"] == "token"
    assert (token["families"], token["attempts"], token["skipped_milestones"]) == (3, 6, 0)
    # each answer against its family's 2 attempts and the other 4: every answer but -1 is in
    # its own attempts; only "3" (gs-003) turns up elsewhere, in gs-002's "x-3" twice; "3" is
    # in gs-003's statement "(3, 8)", so 5 of 6 are statement-novel
    assert table(token) == {
        "all": (6, 10, 12, 2),
        "statement-novel": (5, 8, 10, 0),
        "solved alone": (3, 6, 6, 2),
        "not solved alone": (3, 4, 6, 0),
    }
    assert token["subsets"]["all"]["control"] == {"hits": 2, "pairs": 24, "rate": 2 / 24}
    # the authors' matcher (the default) also finds "3" inside gs-001's "13", twice
    paper = readout()
    assert paper["match"] == "paper"
    assert table(paper) == {**table(token), "all": (6, 10, 12, 4), "solved alone": (3, 6, 6, 4)}
    human = runner.invoke(app, ["ladder", "report", log.location])
    assert "own problem vs other problems" in human.output
    assert "10/12 (83.3%)" in human.output and "match: paper" in human.output


def test_an_answer_is_not_found_from_its_pieces_apart() -> None:
    # every adjacent pair of "1 2 1" is in the first attempt, but not the run of three
    families = [
        ContainmentFamily("a", "?", ("1, 2, 1",), (True,), ("1, 2 and 2, 1",)),
        ContainmentFamily("b", "?", (), (), ("so 1, 2, 1",)),
    ]
    rates = measure_containment(families, Match.TOKEN).subsets["all"]
    assert (rates.own.hits, rates.own.pairs, rates.control.hits, rates.control.pairs) == (
        0,
        1,
        1,
        1,
    )


@pytest.mark.parametrize(
    ("answer", "text", "found"),
    [
        ("2", "so x = 12", True),  # a raw substring: "2" inside "12"
        ("24", "see https://x.org/2024/", True),
        ("12", "112", True),
        ("0.5", "x = \\frac{1}{2}", True),  # MATH normalisation: 0.5 -> \frac{1}{2}
        ("\\dfrac{1}{2}", "we get \\frac 1 2", True),  # spaces dropped, \frac12 braced
        ("x=7", "so the answer is 7", True),  # a short left side: only "7" is compared
        ("1,000", "total 1000.", True),  # a number equal to a token
        ("3.0", "(3)", True),
        ("3", "x = 4", False),
        ("0", "so -1e-9", False),  # the release's tolerance is strict: 1e-9 away is not equal
        ("0.0", "-1e-9 or 0", True),  # a near miss does not hide the equal token after it
        ("", "anything", False),
        ("1" * 61, "1" * 70, False),  # over 60 characters: found nowhere
        (" " + "1" * 60 + " ", "1" * 70, True),  # 60 once stripped: still looked for
        ("X", "x", False),
    ],
)
def test_paper_matcher_is_the_authors_present(answer: str, text: str, found: bool) -> None:
    assert contains_paper(answer, text) is found
    assert contains(answer, text) is found  # the default


@pytest.mark.parametrize("match", list(Match))
def test_a_family_with_a_solved_flag_missing_is_refused_not_truncated(match: Match) -> None:
    family = ContainmentFamily("f", "?", ("1", "2"), (True,), ("x = 2",))
    with pytest.raises(ValueError):
        measure_containment([family], match)


def test_the_two_matchers_differ_where_a_substring_is_not_a_token() -> None:
    assert contains("2", "x = 12") and not contains("2", "x = 12", Match.TOKEN)
    assert contains("0.5", "\\frac{1}{2}") and not contains("0.5", "\\frac{1}{2}", Match.TOKEN)


def test_strip_string_follows_the_math_normalisation() -> None:
    assert strip_string("x = \\dfrac12") == "\\frac{1}{2}"
    assert strip_string("\\left( 3, \\sqrt2 \\right)") == "(3,\\sqrt{2})"
    assert strip_string("5\\text{ cm}") == "5"
    assert strip_string("90^\\circ") == "90" and strip_string(".5") == "\\frac{1}{2}"
    assert strip_string("3/4") == "\\frac{3}{4}" and strip_string("3/x") == "3/x"
    assert strip_string("ab=cd") == "cd" and strip_string("abc=d") == "abc=d"
    assert strip_string("\\frac1") == "\\frac1"  # fewer than two characters: left as it was
    assert strip_string("\\frac12+1") == "\\frac{1}{2}+1"  # what follows the two digits stays
    assert strip_string("\\frac1{2}+1") == "\\frac{1}{2}+1"
    for undefined in ("1\\text{ m} and 2\\text{ m}", "x\\sqrt", "x\\frac"):
        with pytest.raises(MalformedAnswer):
            strip_string(undefined)


def test_paper_matcher_counts_long_answers_as_misses_not_skips() -> None:
    long = "a" * 61
    families = [
        ContainmentFamily("f1", "?", ("2", long), (True, False), ("x = 12", long)),
        ContainmentFamily("f2", "?", ("5",), (True,), ("25",)),
    ]
    result = measure_containment(families)
    assert result.match is Match.PAPER and result.skipped == 0
    assert result.subsets["all"].milestones == 3
    everything = result.subsets["all"]
    # "2" is in "x = 12" (own) and "25" (control); the long one nowhere; "5" in "25" (own)
    assert (everything.own.hits, everything.own.pairs) == (2, 2 + 2 + 1)
    assert (everything.control.hits, everything.control.pairs) == (1, 1 + 1 + 2)
    token = measure_containment(families, Match.TOKEN).subsets["all"]
    assert (token.own.hits, token.control.hits) == (1, 0)  # the long one is a token run


def _released_families(release: Path) -> tuple[list[dict[str, Any]], set[str]]:
    """The 354 released families and the pids of the 50-family audit subset (the families
    ``trace_all_pairs_control.py`` has traces for)."""
    rows = [
        json.loads(line)
        for line in (release / "data" / "diagnostic_354_families.jsonl").read_text().splitlines()
    ]
    subset = set(
        json.loads((release / "data" / "format_audit" / "subset_pids.json").read_text())["pids"]
    )
    return rows, subset


def _released_statement_counts(
    release: Path, match: Match
) -> tuple[tuple[int, int], tuple[int, int]]:
    """Milestone answers found in their own parent prompt: on the 50-family audit subset and on
    all 354 families, through ``measure_containment()``'s statement-novel subset."""
    rows, subset = _released_families(release)
    counts = []
    for chosen in ([r for r in rows if r["pid"] in subset], rows):
        families = [
            ContainmentFamily(
                r["pid"],
                r["parent_prompt"],
                tuple(str(m.get("answer", "")) for m in r["milestones"]),
                (True,) * len(r["milestones"]),
                ("",),
            )
            for r in chosen
        ]
        result = measure_containment(families, match).subsets
        total = result["all"].milestones
        counts.append((total - result["statement-novel"].milestones, total))
    return counts[0], counts[1]


def test_paper_matcher_reproduces_the_released_statement_share(shared_data: SharedData) -> None:
    """trace_recompute.json's ``stmt_share`` is 6/110 for every model (the 50 audited families),
    and its ``novel`` pairs 832 = 104 statement-novel milestones x 8; the token match finds 3."""
    release = shared_data("oracleladder")
    released = json.loads(shared_data("oracleladder/trace_recompute.json").read_text())
    assert {tuple(m["stmt_share"]) for m in released.values()} == {(6, 110)}
    assert {m["novel"][1] for m in released.values()} == {(110 - 6) * 8}
    subset, every = _released_statement_counts(release, Match.PAPER)
    assert subset == (6, 110)
    assert every == (41, 792)  # not the 31: the test below says why
    assert _released_statement_counts(release, Match.TOKEN) == ((3, 110), (17, 792))


def _short_side_hits(rows: list[dict[str, Any]]) -> tuple[int, list[str]]:
    """Golds found in their own statement by the two parts of ``present()`` that need no text
    normalisation: the raw substring, and the MATH rule that reads ``t=2`` as ``2`` (a left
    side of at most two characters dropped) with the right side a raw substring. Returns the
    count and the golds only the rule finds."""
    found, by_rule = 0, []
    for row in rows:
        for milestone in row["milestones"]:
            gold = str(milestone.get("answer", "")).strip()
            sides = gold.split("=")
            right = sides[1] if len(sides) == 2 and len(sides[0]) <= 2 else ""
            raw = 0 < len(gold) <= 60 and gold in row["parent_prompt"]
            rule = bool(right) and right in row["parent_prompt"]
            found += raw or rule
            by_rule += [gold] if rule and not raw else []
    return found, by_rule


def test_no_matcher_that_gives_the_released_6_of_110_counts_31_of_792(
    shared_data: SharedData,
) -> None:
    """Why all 354 families give 41, not the 31 the issue quoted: the release's 6/110 needs
    the short-left-side rule (``t=2``; the raw substring finds 5), and that rule
    alone, on statements left as they are, already finds 36 of 792. trace_recompute.json
    has no 354-family count (its ``stmt_share`` runs over the traced families only)."""
    rows, subset = _released_families(shared_data("oracleladder"))
    audited = [r for r in rows if r["pid"] in subset]
    assert _short_side_hits(audited) == (6, ["t=2"])
    assert strip_string("t=2") == "2"
    found, by_rule = _short_side_hits(rows)
    assert found == 36 and sorted(by_rule) == ["I=K", "a=b", "ar=2", "t=2", "x=0", "x=p-1"]
    for row in rows:  # each of those is found by the paper matcher itself
        for milestone in row["milestones"]:
            if str(milestone.get("answer", "")) in by_rule:
                assert contains_paper(str(milestone["answer"]), row["parent_prompt"])
