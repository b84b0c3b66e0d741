"""The one log reader: clear errors for corrupt, missing and wrong-kind logs (issue 10, #12)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from gapscope.analysis.logs import LogError, expand_log_paths, read_log, run_info

runner = CliRunner()


def _app():  # type: ignore[no-untyped-def]
    from gapscope.app.main import app

    return app


def test_corrupt_eval_is_a_clear_error_not_eocd(tmp_path: Path) -> None:
    corrupt = tmp_path / "broken.eval"
    corrupt.write_bytes(b"PK\x03\x04 this is not a whole zip file")
    with pytest.raises(LogError, match="not a readable Inspect log"):
        read_log(corrupt)
    for command in (["ladder", "report"], ["onng", "report"], ["prove", "report"], ["report"]):
        result = runner.invoke(_app(), [*command, str(corrupt)])
        assert result.exit_code == 2, (command, result.output)
        assert "broken.eval is not a readable Inspect log" in result.output
        assert not isinstance(result.exception, ValueError)  # no traceback from the zip layer


@pytest.mark.parametrize(
    ("command", "reads"),
    [
        (["ladder", "report"], "'oracle_ladder'"),
        (["onng", "report"], "'onng'"),
        (["prove", "report"], "'prove'"),
    ],
)
def test_another_diagnostics_log_is_named_as_such(
    logs: dict[str, Path], command: list[str], reads: str
) -> None:
    result = runner.invoke(_app(), [*command, str(logs["rule"]), "--json"])
    assert result.exit_code == 2, result.output
    message = f"is a 's2b_lm' log; this command reads {reads} logs"
    assert message in result.output
    assert "error: 'problem'" not in result.output


def test_json_error_envelope_is_the_only_stdout(logs: dict[str, Path]) -> None:
    import json

    result = runner.invoke(_app(), ["ladder", "report", str(logs["rule"]), "--json"])
    envelope = json.loads(result.stdout)
    assert envelope["status"] == "bad_input" and "s2b_lm" in envelope["error"]
    assert envelope["command"] == "ladder report" and envelope["summary"] == []


def test_directories_expand_and_typos_are_errors(logs: dict[str, Path], tmp_path: Path) -> None:
    assert expand_log_paths([logs["rule"].parent]) == [logs["rule"]]
    with pytest.raises(LogError, match="no such file"):
        expand_log_paths([tmp_path / "typo"])
    with pytest.raises(LogError, match=r"holds no \.eval logs"):
        expand_log_paths([tmp_path])


def test_run_info_has_model_task_args_and_run_time(logs: dict[str, Path]) -> None:
    info = run_info(read_log(logs["random"], task="s2b_lm"))
    assert info.task == "s2b_lm" and info.status == "success"
    assert info.task_args["listener"] == "random" and info.task_args["preset"] == "cat-10shot"
    assert info.duration_s is not None and info.duration_s >= 0
