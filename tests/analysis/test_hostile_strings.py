"""User strings are printed literally, malformed logs and unwritable outputs are clear errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from inspect_ai.log import read_eval_log, write_eval_log
from typer.testing import CliRunner

from gapscope.app.main import app

runner = CliRunner(env={"COLUMNS": "400"})
HOSTILE = "[/bold]x[/] \x1b[2J"


def _rewritten(source: Path, out: Path, edit: object) -> Path:
    log = read_eval_log(str(source))
    edit(log)  # type: ignore[operator]
    out.parent.mkdir(parents=True, exist_ok=True)
    write_eval_log(log, str(out))
    return out


def test_markup_and_escapes_in_a_model_name_are_printed_as_they_are(
    logs: dict[str, Path], tmp_path: Path
) -> None:
    def rename(log: object) -> None:
        log.eval.model = HOSTILE  # type: ignore[attr-defined]

    hostile = _rewritten(logs["ladder"], tmp_path / "logs" / "hostile.eval", rename)
    result = runner.invoke(app, ["report", str(hostile), "--out", str(tmp_path / "r.html")])
    assert result.exit_code == 0, result.output
    assert "[/bold]x[/] \\x1b[2J" in result.stdout
    assert "\x1b" not in result.stdout


def test_markup_in_a_log_dir_is_printed_as_it_is(tmp_path: Path) -> None:
    # a fresh interpreter: Inspect keeps the first display it made for the whole process
    log_dir = tmp_path / "[/bold]x[/]"
    args = ["run", "s2b", "--listener", "rule", "--preset", "demo", "--seeds", "1"]
    code = "import sys; from gapscope.app.main import app; app(sys.argv[1:])"
    done = subprocess.run(
        [sys.executable, "-c", code, *args, "--log-dir", str(log_dir)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert f"log: {log_dir}" in done.stdout
    assert "Inspect shows this run as log lines" in done.stderr


def test_a_malformed_store_names_the_log_and_the_sample(
    logs: dict[str, Path], tmp_path: Path
) -> None:
    def break_games(log: object) -> None:
        log.samples[0].store["games"] = ["x", 1, None]  # type: ignore[attr-defined]

    broken = _rewritten(logs["rule"], tmp_path / "broken.eval", break_games)
    sample = read_eval_log(str(broken)).samples[0]  # type: ignore[index]
    result = runner.invoke(app, ["report", str(broken), "--out", str(tmp_path / "r.html")])
    assert result.exit_code == 2, result.output
    assert f"{broken}: sample {sample.id} (epoch 1)" in result.output
    assert "Traceback" not in result.output


def test_verdicts_to_a_full_device_are_a_clear_error(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"answer": "1", "gold": "1"}) + "\n", encoding="utf-8")
    args = ["verify", "--jsonl", str(src), "--out", "/dev/full", "--no-cache", "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    error = json.loads(result.stdout)["error"]
    assert error.startswith("/dev/full: cannot write verdicts: No space left on device")


def test_a_report_that_cannot_be_written_is_a_clear_error(
    logs: dict[str, Path], tmp_path: Path
) -> None:
    (tmp_path / "r_figures").write_text("a file where the figures go")
    args = ["report", str(logs["rule"]), "--out", str(tmp_path / "r.html"), "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    error = json.loads(result.stdout)["error"]
    assert "r_figures" in error and "cannot write the report" in error
