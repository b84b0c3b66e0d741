"""``--rules t2`` counts as T2's released evaluator does; ``--rules gapscope`` as before.

The end-to-end test runs one scripted set of ten rows through the task twice (scripted model,
fake Lean) and checks both rule sets against a table computed by hand from their rules.
"""

# ruff: noqa: RUF001  (Lean's double-struck N is meant, not a look-alike letter)

from __future__ import annotations

import json
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessage
from rich.console import Console
from typer.testing import CliRunner

from gapscope.analysis.t2 import summarize_log
from gapscope.analysis.t2_tables import print_t2
from gapscope.app.main import app
from gapscope.models.scripted import script
from gapscope.t2.extract import Answer, AnswerStatus, released_answer
from gapscope.t2.records import T2Record
from gapscope.t2.rules import Rules, parse_rules, released_rows
from gapscope.t2.task import t2

BEFORE = "\ndef f (n : ℕ) : ℕ := n\n"


def _target(name: str) -> str:
    return f"theorem {name} (n : ℕ) : f n = n := rfl"


def _successor(name: str, i: int) -> str:
    return f"theorem {name}_s{i} (n : ℕ) : f (f n) = n := by rw [{name}, {name}]"


def _row(name: str, after: list[str], nl: str = "") -> dict[str, str]:
    target = _target(name)
    tail = "\n" + "\n".join(after)
    return {
        "id": f"p.{name}",
        "target_code": target,
        "formal_language": "import Mathlib" + BEFORE + target + tail,
        "natural_language": nl,
        "target_code_name": f"theorem {name}",
        "before_target_code": BEFORE,
        "after_target_code": tail,
        "header": "import Mathlib",
        "dataset_name": "rules_fixture",
    }


def _two(name: str) -> list[str]:
    return [_successor(name, 1), _successor(name, 2)]


ROWS = [
    _row("a", _two("a")),
    _row("b", _two("b")),
    _row("c", _two("c")),
    _row("d", _two("d")),
    _row("e", _two("e")),
    _row("g", _two("g")),
    _row("h", _two("h")),
    _row("h", [_successor("h", 1), _successor("h", 3)]),  # the same id, other successors
    _row("i", ["theorem unrelated : 1 = 1 := rfl"]),  # no successor uses the target
    _row("j", [_successor("j", 1)]),  # one successor: below the paper's |T_succ| >= 2
]

REPLIES = {
    "a": f"THOUGHT: direct.\n```lean\n{_target('a')}\n```",
    "b": f"THOUGHT: wrong meaning.\n```lean\n{_target('b')} -- fake-breaks: b_s1\n```",
    "c": f"THOUGHT: a lean4 tag.\n```lean4\n{_target('c')}\n```",
    "d": "THOUGHT: renamed.\n```lean\ntheorem d' (n : ℕ) : f n = n := rfl"
    " -- fake-breaks: d_s1\n```",
    "e": f"THOUGHT: with its import.\n```lean\nimport Mathlib\n{_target('e')}\n```",
    "g": f"THOUGHT: the checker dies.\n```lean\n{_target('g')} -- fake:crash\n```",
    "h": f"THOUGHT: breaks only the last row's test.\n```lean\n{_target('h')}"
    " -- fake-breaks: h_s3\n```",
    "i": _target("i"),  # bare Lean, no fence
    "j": f"```lean\n{_target('j')}\n```",
}

# By hand, per rule set, (compiles, TA) of each unit of the denominator:
#   gapscope: a (1,1) b (1,0) c (1,1) d renamed (0,0) e imports dropped (1,1) h first row (1,1);
#     g crashed the checker, which then answered a control: broke_check, a failure (0,0); the
#     second h a duplicate, i and j are filtered -> 7 units.
#   t2: a (1,1) b (1,0) c lean4 tag -> the reply is checked whole (0,0) d checked (1,0)
#     e import kept (0,0) g failure (0,0) h: its last row evaluated (1,0), its other row has no
#     result of its own (0,0), i (1,1) j (1,1) -> 10 rows.
GAPSCOPE = {"units": 7, "compile": 5 / 7, "ta": 4 / 7, "precision": 4 / 5}
RELEASED = {"units": 10, "compile": 6 / 10, "ta": 3 / 10, "precision": 3 / 6}


def _answer(messages: list[ChatMessage]) -> str:
    prompt = messages[-1].text
    return next(reply for name, reply in REPLIES.items() if f"declaration `{name}`" in prompt)


@pytest.mark.parametrize(("rules", "expected"), [("gapscope", GAPSCOPE), ("t2", RELEASED)])
def test_each_rule_set_gives_its_hand_computed_numbers(
    rules: str, expected: dict[str, float], fake_lean: str, tmp_path: Path
) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in ROWS) + "\n")
    log = inspect_eval(
        t2(data=str(data), lean=fake_lean, context="st", rules=rules),
        model=script(f"t2-rules-{rules}", _answer),
        log_dir=str(tmp_path / "logs"),
    )[0]
    assert log.status == "success"
    summary = summarize_log(log, n_resamples=50)
    report = summary.to_dict()
    st = report["contexts"]["st"]
    assert report["rules"] == rules and st["rules"] == rules
    assert st["rows"] == expected["units"]
    assert st["compile"]["estimate"] == pytest.approx(expected["compile"])
    assert st["ta"]["estimate"] == pytest.approx(expected["ta"])
    assert st["compile_precision"]["estimate"] == pytest.approx(expected["precision"])
    assert st["server_error_records"] == [] and st["outcomes"]["broke_check"] == 1
    if rules == "t2":
        assert st["records"] == 9 and report["skipped"] == {}
        assert "--rules t2" in summary.notes[0]
    else:
        assert st["records"] == 7 and st["outcomes"]["renamed"] == 1
        assert report["skipped"] == {
            "duplicate_id": 1,
            "no_mentioning_successor": 1,
            "too_few_successors": 1,
        }
        assert "--rules gapscope" in summary.notes[0]
    rows = {row.metric: row for row in summary.rows()}
    label = "st, T2 rules" if rules == "t2" else "st"
    assert rows[f"TA (parity) [{label}]"].value == pytest.approx(100 * expected["ta"])
    top = next(b for b in st["bleu"]["by_bucket"] if b["bleu"] == "90-100")
    metric = "t2" if rules == "t2" else "sacrebleu"  # the released BLEU under the released rules
    assert st["bleu"]["metric"] == metric
    top_row = rows[f"wrong at BLEU 90-100 ({metric} BLEU) [{label}]"]
    assert top_row.value == pytest.approx(100 * top["wrong"]) and top_row.n == top["samples"]
    console = Console(record=True, width=250)
    print_t2(summary, console)
    text = console.export_text()
    assert f"rules: {rules}" in text and "TA by BLEU" in text
    assert top["samples"] >= 2  # `a` and `j` answer with the target itself
    html = tmp_path / "report.html"
    result = CliRunner().invoke(app, ["report", str(log.location), "--out", str(html)])
    assert result.exit_code == 0, result.output
    page = html.read_text(encoding="utf-8")
    assert f"rules {rules}" in page and "Hard TA" in page and "TA by BLEU" in page
    signature = (
        "nrefs:1|case:mixed|eff:no|tok:none|smooth:none"
        if rules == "t2"
        else "nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp"
    )
    assert signature in page and signature in text.replace("\n", "")
    assert "own per-record BLEU-4" in page and "exact match" in page
    assert 0 < st["bleu"]["t2_exact_match"] < 1 and 0 < st["bleu"]["t2_bleu4"] < 100


def test_released_extraction_follows_the_harness_parser() -> None:
    last = released_answer("```\nfirst\n```\ntext\n```lean\nsecond\n```\n```lean\n  \n```")
    assert (last.status, last.code) == (AnswerStatus.OK, "second")
    assert released_answer("THOUGHT\n```lean\nimport Mathlib\ntheorem x : 1 = 1 := rfl").code == (
        "import Mathlib\ntheorem x : 1 = 1 := rfl"
    )  # unclosed last block, imports kept
    whole = "THOUGHT: x\n```lean4\ntheorem x : True := trivial\n```"
    assert released_answer(whole).code == whole  # a digit in the tag: no block is found
    # ... and with a newline after the closing fence, the unclosed pattern matches there
    assert released_answer(whole + "\n") == Answer(AnswerStatus.OK, "", "empty generation")
    assert released_answer("theorem x : True := trivial").code == "theorem x : True := trivial"
    assert released_answer("```lean\n\n```").code == ""  # checked with the slot left empty


def _record(id_: str, line: int, target: str) -> T2Record:
    return T2Record(id_, target, "", "", "", "", "", "", "", line=line)


def test_released_rows_keep_the_last_duplicate_and_count_every_row() -> None:
    rows = released_rows(
        [_record("x", 1, "first"), _record("y", 2, "only"), _record("x", 3, "last")]
    )
    assert [(r.record.id, r.record.target_code, r.rows) for r in rows] == [
        ("x", "last", 2),
        ("y", "only", 1),
    ]


def test_unknown_rules_name_the_parameter() -> None:
    assert parse_rules(" T2 ") is Rules.T2
    with pytest.raises(ValueError, match=r"rules must be one of gapscope, t2, got 'paper'"):
        parse_rules("paper")


@pytest.mark.parametrize(("rules", "ta"), [("gapscope", 1.0), ("t2", 1 / 3)])
def test_a_record_without_a_sample_fails_only_under_the_released_rules(
    rules: str, ta: float, fake_lean: str, tmp_path: Path
) -> None:
    """The released evaluator's denominator is the data file: an id with no result (a run
    that stopped first) is ``missing``, a failure; under gapscope's rules it is not counted."""
    data = tmp_path / "rows.jsonl"
    rows = [ROWS[0], _row("k", _two("k")), _row("k", _two("k"))]  # k: two rows, one id
    data.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n")
    replies = {**REPLIES, "k": f"```lean\n{_target('k')}\n```"}

    def answer(messages: list[ChatMessage]) -> str:
        prompt = messages[-1].text
        return next(reply for name, reply in replies.items() if f"declaration `{name}`" in prompt)

    log = inspect_eval(
        t2(data=str(data), lean=fake_lean, context="st", rules=rules, min_successors=1),
        model=script(f"t2-missing-{rules}", answer),
        log_dir=str(tmp_path / "logs"),
    )[0]
    assert log.status == "success" and log.samples is not None
    log.samples = [s for s in log.samples if not str(s.id).startswith("p.k")]
    st = summarize_log(log, n_resamples=20).to_dict()["contexts"]["st"]
    assert st["ta"]["estimate"] == pytest.approx(ta)
    assert st["outcomes"]["missing"] == (1 if rules == "t2" else 0)
    assert st["rows"] == (3 if rules == "t2" else 1)


def test_released_rules_count_an_undescribed_record_missing_and_refuse_the_repo_track(
    fake_lean: str, tmp_path: Path
) -> None:
    data = tmp_path / "rows.jsonl"
    rows = [_row("a", _two("a"), nl="f is the identity"), _row("j", [_successor("j", 1)])]
    data.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n")
    log = inspect_eval(
        t2(data=str(data), lean=fake_lean, context="nl", rules="t2"),
        model=script("t2-rules-nl", _answer),
        log_dir=str(tmp_path / "logs"),
    )[0]
    assert log.status == "success" and len(log.samples or []) == 1  # j has no NL: not asked
    nl = summarize_log(log, n_resamples=20).to_dict()["contexts"]["nl"]
    assert nl["rows"] == 2 and nl["outcomes"]["missing"] == 1
    assert nl["ta"]["estimate"] == pytest.approx(1 / 2)
    with pytest.raises(ValueError, match=r"research-track evaluator .* is not reproduced"):
        t2(data=str(data), repo=str(tmp_path), rules="t2")
