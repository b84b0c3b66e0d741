"""The gapscope command line as a user drives it."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from gapscope.app.main import app

runner = CliRunner()


def _args(command: str, log_dir: Path) -> list[str]:
    """A command line as a user types it, with the logs kept in the test's directory."""
    return [*command.split(" "), "--log-dir", str(log_dir)]


def test_help_lists_the_commands() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for command in ("run", "episodes", "stats"):
        assert command in result.output
    result = runner.invoke(app, ["run", "s2b", "--help"])
    assert result.exit_code == 0
    assert "--listener" in result.output and "--preset" in result.output


def test_run_s2b_json_summary(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        _args("run s2b --preset demo --seeds 2 --listener rule --json", tmp_path),
    )
    assert result.exit_code == 0, result.output
    envelope = json.loads(result.stdout)
    assert envelope["command"] == "run s2b" and envelope["status"] == "ok"
    summary = envelope["details"]
    assert envelope["logs"] == [summary["log"]]
    assert [row["metric"] for row in envelope["summary"]] == ["ZSCT [demo]", "adj-ZSCT [demo]"]
    assert summary["preset"] == "demo" and summary["listener"] == "rule"
    assert [row["seed"] for row in summary["per_seed"]] == [0, 1]
    assert summary["summary"]["zsct"] == {"mean": 100.0, "sd": 0.0, "n": 2}
    assert Path(summary["log"].removeprefix("file://")).exists()


def test_run_s2b_overrides_and_bad_parameters(tmp_path: Path) -> None:
    ok = runner.invoke(
        app,
        _args("run s2b --preset demo --seeds 1 --listener random -S query_size=2 --json", tmp_path),
    )
    assert ok.exit_code == 0, ok.output
    bad = runner.invoke(app, ["run", "s2b", "--preset", "demo", "-S", "v_min=9"])
    assert bad.exit_code == 2
    assert "v_min (9) must not exceed v_max (3)" in bad.output
    unknown = runner.invoke(app, ["run", "s2b", "-S", "shots=3"])
    assert unknown.exit_code == 2 and "unknown parameter 'shots'" in unknown.output
    listener = runner.invoke(app, ["run", "s2b", "--listener", "oracle"])
    assert listener.exit_code == 2 and "--listener" in listener.output


def test_episodes_export_schema(tmp_path: Path) -> None:
    out = tmp_path / "ep.jsonl"
    result = runner.invoke(
        app, ["episodes", "--preset", "cat-10shot", "--seed", "3", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    header, *games = [json.loads(line) for line in out.read_text().splitlines()]
    assert header["record"] == "episode" and header["seed"] == 3
    assert header["domain"] == "categorical"
    assert len(header["structure"]) == 4  # n_dim of the Table-1 presets
    permutation = header["permutation"]
    assert sorted(permutation.values()) == list(range(1, 11))
    for game in games:
        assert game["phase"] in ("support", "query")
        assert game["same"] == (game["target"] == game["listener"])
        # the message is the permuted posdis code of the target, checkable from the header
        assert game["message"] == [permutation[str(v + 1)] for v in game["target"]]
        items = header["stimuli"]["items"]
        assert game["listener_view"] == [items[d][v] for d, v in enumerate(game["listener"])]


def test_episodes_rejects_impossible_k(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["episodes", "--preset", "cat-0shot", "-S", "k_shot=40", "--out", str(tmp_path / "x")]
    )
    assert result.exit_code == 2
    assert "k_shot (40) exceeds the supporting phase" in result.output


def test_episodes_json_envelope_and_bad_out(tmp_path: Path) -> None:
    out = tmp_path / "ep.jsonl"
    args = ["episodes", "--preset", "demo", "--seed", "1", "--out", str(out), "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    details = json.loads(result.stdout)["details"]
    assert details["out"] == str(out)
    assert details["games"] == len(out.read_text().splitlines()) - 1  # minus the header
    result = runner.invoke(app, ["episodes", "--out", str(tmp_path), "--json"])
    assert result.exit_code == 2
    envelope = json.loads(result.stdout)
    assert envelope["status"] == "bad_input" and "is a directory" in envelope["error"]


def _quadrant_csv(tmp_path: Path, x: str, y: str) -> Path:
    rows = [f"{x},{y}"] + [f"{i},{(i * 7) % 10}" for i in range(10)]
    path = tmp_path / "models.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_tables_keep_every_cell_when_piped_and_take_width(tmp_path: Path) -> None:
    """Tables written through a pipe used rich's 80 columns and cut names (``gapsc…``)."""
    x, y = "adj_zsct_on_the_categorical_ten_shot_preset", "minif2f_pass_at_32_on_the_aime_subset"
    csv = _quadrant_csv(tmp_path, x, y)
    piped = runner.invoke(app, ["stats", "quadrant", str(csv), "--x", x, "--y", y])
    assert piped.exit_code == 0, piped.output
    assert f"low {x}" in piped.output and f"high {y}" in piped.output
    assert "…" not in piped.output
    narrow = runner.invoke(
        app, ["--width", "60", "stats", "quadrant", str(csv), "--x", x, "--y", y]
    )
    assert narrow.exit_code == 0, narrow.output
    assert max(len(line) for line in narrow.output.splitlines()) <= 60


def test_user_column_names_are_printed_literally(tmp_path: Path) -> None:
    x, y = "[bold]x[/bold]", "y[/]"
    csv = _quadrant_csv(tmp_path, x, y)
    result = runner.invoke(app, ["stats", "quadrant", str(csv), "--x", x, "--y", y])
    assert result.exit_code == 0, result.output
    assert "low [bold]x[/bold]" in result.output and "high y[/]" in result.output


def test_lean_doctor_gives_the_elan_command_once_and_unwrapped(monkeypatch: object) -> None:
    import os

    env = {**os.environ, "PATH": "/usr/bin:/bin", "COLUMNS": "60"}
    result = runner.invoke(app, ["lean", "doctor"], env=env)
    assert result.exit_code == 0
    lines = result.output.splitlines()
    url = "https://raw.githubusercontent.com/leanprover/elan/master/elan-init.sh"
    with_url = [line for line in lines if url in line]
    assert len(with_url) == 1  # once, for elan; lean and lake point back to it
    assert with_url[0].strip().startswith("-> install elan: curl") and with_url[0].endswith("| sh")
    assert sum("the same fix as elan" in line for line in lines) == 2


def test_steer_extract_and_run_s2b_defaults_never_share_an_episode() -> None:
    """Issue 18: `steer extract` started at seed 0 like `run s2b`, so the documented recipe
    evaluated a direction on the very games it was read from."""
    import inspect

    from gapscope.app.s2b import run_s2b
    from gapscope.app.steer import extract

    def seeds(command: object) -> set[int]:
        params = inspect.signature(command).parameters  # type: ignore[arg-type]
        first, n = params["first_seed"].default, params["seeds"].default
        return set(range(first, first + n))

    assert seeds(extract) and seeds(run_s2b) and not seeds(extract) & seeds(run_s2b)


def test_lean_setup_builds_the_chosen_kernel_checker(tmp_path: Path) -> None:
    result = runner.invoke(app, ["lean", "setup", str(tmp_path / "w"), "--checker", "comparator"])
    assert result.exit_code == 0, result.output
    assert "lake build Comparator/comparator lean4export/lean4export" in result.output
    refused = runner.invoke(app, ["lean", "setup", str(tmp_path / "s"), "--checker", "safeverify"])
    assert refused.exit_code == 2 and "no revision built for Lean v4.33" in refused.output
    bad = runner.invoke(app, ["lean", "setup", str(tmp_path / "x"), "--checker", "magic"])
    assert bad.exit_code == 2 and "checker must be one of comparator, none" in bad.output
