"""The authors' strict cascade: each stage as the release defines it, in a run and a re-grade.

Expectations are the release's own (its README's quickstart and verifier-mode examples) or
follow from the stage rules written in its ``decomposer/verifier``; checked against the
release's ``VerifierModule`` on 477 pairs (the 34 adjudicated responses and gapscope's
labelled verifier fixtures), labels and reasons agree on all 477.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from typer.testing import CliRunner

from gapscope.app.main import app
from gapscope.ladder.probes import Condition
from gapscope.ladder.strict_cascade import (
    MATH_VERIFY_MATCH,
    NO_BOX,
    NOT_EQUIVALENT,
    PARSE_ERROR,
    STRING_MATCH,
    SYMBOLIC_MATCH,
    StrictCascade,
    last_box,
)
from gapscope.ladder.task import oracle_ladder
from gapscope.models.scripted import script
from tests.ladder.test_ladder_task import LIMIT, _student


@pytest.fixture(scope="module")
def cascade() -> Iterator[StrictCascade]:
    checker = StrictCascade(timeout_s=30)
    yield checker
    checker.close()


@pytest.mark.parametrize(
    ("response", "gold", "accepted", "reason"),
    [
        # the release README's quickstart
        (r"The answer is \boxed{\frac{49}{50}}.", r"\frac{49}{50}", True, STRING_MATCH),
        # README "Verifier modes": accepted only by the extended mode, so not by this one
        (r"... \boxed{c=2a}", "2a-c=0", False, NOT_EQUIVALENT),
        (r"... \boxed{174} and \boxed{13}", "174,13", False, NOT_EQUIVALENT),
        ("The answer is 5.", "5", False, NO_BOX),
        # only what follows the last </think>
        (r"<think>\boxed{2}</think> so \boxed{3}", "2", False, NOT_EQUIVALENT),
        # MATH normalisation: a short left side is dropped, 0.5 is 1/2
        (r"\boxed{x=2}", "y=2", True, STRING_MATCH),
        (r"\boxed{0.5}", r"\frac{1}{2}", True, STRING_MATCH),
        # sympy on plain expressions, ^ as power, implicit products
        (r"\boxed{x^2+2x+1}", "(x+1)^2", True, SYMBOLIC_MATCH),
        # LaTeX sympy cannot parse goes on to math-verify
        (r"\boxed{\sqrt{2}/2}", r"\frac{\sqrt{2}}{2}", True, MATH_VERIFY_MATCH),
        (r"\boxed{\sqrt{3}/2}", r"\frac{\sqrt{2}}{2}", False, PARSE_ERROR),
        # thousands commas dropped for math-verify
        (r"\boxed{1,234}", "1234", True, MATH_VERIFY_MATCH),
    ],
)
def test_each_stage_as_the_release_defines_it(
    cascade: StrictCascade, response: str, gold: str, accepted: bool, reason: str
) -> None:
    verdict = cascade.check(response, gold)
    assert (verdict.accepted, verdict.reason) == (accepted, reason)
    assert verdict.label == ("ACCEPT" if accepted else "NOT_ACCEPT")


def test_the_last_box_by_the_release_rules() -> None:
    assert last_box(r"\boxed{1} then \boxed{\frac{a}{b}}") == r"\frac{a}{b}"
    assert last_box(r"so \boxed 7$ and more") == "7"  # a spaced box runs to the next $
    assert last_box(r"\fbox{4}") == r"\fbox{4}"  # kept whole, as remove_boxed leaves it
    assert last_box(r"\boxed{unclosed") is None


def test_a_run_graded_by_the_authors_cascade(tmp_path: Path) -> None:
    model = script("cascade-student", _student({Condition.C2, Condition.S0}))
    task = oracle_ladder(
        families="bundled", k=1, conditions="ladder", limit=LIMIT, verifier="authors"
    )
    assert task.metadata is not None and task.metadata["verifier"] == "authors"
    log = inspect_eval(task, model=model, log_dir=str(tmp_path), display="none")[0]
    assert log.status == "success", log.error
    with zipfile.ZipFile(log.location) as archive:
        samples = [json.loads(archive.read(n)) for n in archive.namelist() if "samples/" in n]
    scores = [s for sample in samples for s in sample["scores"].values()]
    assert {s["metadata"]["stage"] for s in scores} == {"authors-cascade"}
    # the student boxes the gold under C2 and S0 and -987654321 elsewhere
    correct: dict[str, list[bool]] = {sample["metadata"]["condition"]: [] for sample in samples}
    for sample in samples:
        (score,) = sample["scores"].values()
        correct[sample["metadata"]["condition"]].append(score["value"] == "C")
    assert all(correct["C2"]) and not any(correct["C1"]) and not any(correct["C3"])
    with pytest.raises(ValueError, match="verifier must be one of gapscope, authors"):
        oracle_ladder(families="bundled", verifier="strict")


def test_regrade_puts_both_verdicts_side_by_side(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.jsonl"
    records = [
        {"id": 1, "response": r"\boxed{\frac{49}{50}}", "gold": r"\frac{49}{50}"},
        # an answer split over two boxes: the strict cascade grades the last box alone
        {"id": 2, "response": r"\boxed{174} and \boxed{13}", "gold": "174,13"},
        {"id": 3, "response": r"\boxed{7}", "gold": "8"},
    ]
    pairs.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    out = tmp_path / "verdicts.jsonl"
    args = ["ladder", "regrade", str(pairs), "--out", str(out), "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)["details"]["summary"]
    assert summary["records"] == 3 and summary["authors_accept"] == 1
    assert summary["only_authors_accept"] == 0
    written = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in written] == [1, 2, 3]
    assert [r["authors_label"] for r in written] == ["ACCEPT", "NOT_ACCEPT", "NOT_ACCEPT"]
    assert written[2]["gapscope_label"] == "NOT_ACCEPT"
    pairs.write_text('{"response": "x"}\n', encoding="utf-8")
    bad = CliRunner().invoke(app, ["ladder", "regrade", str(pairs), "--json"])
    assert bad.exit_code != 0
    assert "line 1: needs string fields 'response' and 'gold'" in json.loads(bad.stdout)["error"]
