"""``gapscope verify`` through a tiny typer app that registers ``verify_command``."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from typer.testing import CliRunner

from gapscope.app.verify import verify_command

app = typer.Typer()
app.command("verify")(verify_command)
app.command("noop")(lambda: None)  # two commands, so "verify" is a subcommand as in gapscope
runner = CliRunner()


def test_single_accept_and_reject() -> None:
    result = runner.invoke(app, ["verify", "--gold", "1000", "--answer", "1,000", "--no-cache"])
    assert result.exit_code == 0 and "ACCEPT" in result.output
    result = runner.invoke(
        app, ["verify", "--gold", "D", "--answer", "The answer is \\boxed{C}", "--no-cache"]
    )
    assert result.exit_code == 0 and "NOT_ACCEPT mismatch" in result.output


def test_bad_schema_exits_2() -> None:
    result = runner.invoke(app, ["verify", "--gold", "1", "--answer", "1", "--schema", "FOO"])
    assert result.exit_code == 2
    assert "MCQ_STRING" in result.output


def test_jsonl_keeps_order_and_reports_bad_lines(tmp_path: Path) -> None:
    lines = [
        json.dumps({"answer": "\\frac12", "gold": "0.5"}),
        "{not json",
        json.dumps({"gold": "1"}),
        json.dumps({"answer": "x<2", "gold": "x>2", "schema": "INEQUALITY"}),
    ]
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = runner.invoke(app, ["verify", "--jsonl", str(src), "--out", str(out), "--no-cache"])
    assert result.exit_code == 0
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [r["label"] for r in rows] == ["ACCEPT", "NOT_ACCEPT", "NOT_ACCEPT", "NOT_ACCEPT"]
    assert "line 2" in rows[1]["error"] and "line 3" in rows[2]["error"]
    assert "4 graded" in result.output


def test_json_envelope_for_one_answer() -> None:
    args = ["verify", "--gold", "1000", "--answer", "so \\boxed{1,000}", "--no-cache", "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    envelope = json.loads(result.stdout)
    assert (envelope["command"], envelope["status"], envelope["error"]) == ("verify", "ok", None)
    details = envelope["details"]
    assert (details["label"], details["extraction"]) == ("ACCEPT", "boxed")
    assert (details["answer"], details["gold"]) == ("so \\boxed{1,000}", "1000")
    assert details["strict"] in (True, False) and details["stage"]


def test_json_envelope_for_a_file_holds_the_verdicts_unless_they_go_to_out(
    tmp_path: Path,
) -> None:
    src = tmp_path / "in.jsonl"
    lines = [json.dumps({"answer": "\\frac12", "gold": "0.5"}), "{bad", json.dumps({"gold": "1"})]
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = runner.invoke(app, ["verify", "--jsonl", str(src), "--no-cache", "--json"])
    assert result.exit_code == 0, result.output
    details = json.loads(result.stdout)["details"]  # stdout is the envelope and nothing else
    assert [v["label"] for v in details["verdicts"]] == ["ACCEPT", "NOT_ACCEPT", "NOT_ACCEPT"]
    assert (details["graded"], details["accept"], details["input_errors"]) == (3, 1, 2)
    assert details["out"] is None

    out = tmp_path / "out.jsonl"
    args = ["verify", "--jsonl", str(src), "--out", str(out), "--no-cache", "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    details = json.loads(result.stdout)["details"]
    assert details["verdicts"] is None and details["out"] == str(out)
    assert len(out.read_text(encoding="utf-8").splitlines()) == 3


def test_json_envelope_on_bad_input(tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    result = runner.invoke(app, ["verify", "--jsonl", str(missing), "--json"])
    assert result.exit_code == 2
    envelope = json.loads(result.stdout)
    assert envelope["status"] == "bad_input" and f"{missing}: no such file" in envelope["error"]
    result = runner.invoke(app, ["verify", "--gold", "1", "--json"])
    assert result.exit_code == 2
    assert "give --gold and --answer" in json.loads(result.stdout)["error"]


def test_jsonl_refuses_to_write_its_verdicts_over_its_input(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    content = json.dumps({"answer": "1", "gold": "1"}) + "\n"
    src.write_text(content, encoding="utf-8")
    (tmp_path / "sub").mkdir()
    for out in (src, tmp_path / "sub" / ".." / "in.jsonl"):
        args = ["verify", "--jsonl", str(src), "--out", str(out), "--no-cache", "--json"]
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
        error = json.loads(result.stdout)["error"]
        assert str(out) in error and f"input --jsonl {src}" in error
    assert src.read_text(encoding="utf-8") == content
