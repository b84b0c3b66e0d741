"""``gapscope report``: one self-contained HTML file, figures as PNG and SVG, comparisons."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.environment import require_program

runner = CliRunner(env={"COLUMNS": "400"})  # rich must not wrap the messages


def _app():  # type: ignore[no-untyped-def]
    from gapscope.app.main import app

    return app


@pytest.fixture(scope="module")
def report(logs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    out = tmp_path_factory.mktemp("report") / "report.html"
    models = out.parent / "models.csv"
    models.write_text(
        "\ufeffmodel,adj_zsct,minif2f\n"
        + "".join(f"m{i},{i * 10},{i * 3 % 7}\n" for i in range(8)),
        encoding="utf-8",
    )
    args = ["report", *(str(p.parent) for p in logs.values()), "--out", str(out), "--json"]
    args += ["--quadrant", str(models), "--x", "adj_zsct", "--y", "minif2f", "--label", "model"]
    result = runner.invoke(_app(), args)
    assert result.exit_code == 0, result.output
    envelope: dict[str, object] = json.loads(result.stdout)
    return envelope


def test_report_writes_every_applicable_figure_as_png_and_svg(report: dict[str, object]) -> None:
    details = report["details"]
    assert isinstance(details, dict)
    assert set(details["figures"]) == {"s2b_zsct", "ladder_gaps", "ladder_tau", "quadrant"}
    for png, svg in details["figures"].values():
        assert Path(png).read_bytes().startswith(b"\x89PNG")
        assert b"<svg" in Path(svg).read_bytes()[:500]


def test_report_html_is_self_contained(report: dict[str, object]) -> None:
    details = report["details"]
    assert isinstance(details, dict)
    page = Path(details["html"]).read_text(encoding="utf-8")
    references = re.findall(r'(?:src|href)\s*=\s*"([^"]*)"', page)
    assert references and all(ref.startswith("data:") for ref in references)
    assert "http://" not in page and "https://" not in page and "<link" not in page
    assert page.count("<figure") == 4
    for model in ("rule listener", "random listener", "scripted/always-zero"):
        assert model in page  # one gap-profile row per model
    assert "Comparisons" in page and "McNemar" in page


def test_report_summary_is_gap_profile_rows(report: dict[str, object]) -> None:
    rows = report["summary"]
    assert isinstance(rows, list)
    zsct = {r["model"]: r for r in rows if r["metric"] == "ZSCT [cat-10shot]"}
    assert zsct["rule listener"]["value"] == 100.0 and zsct["rule listener"]["n"] == 6 * 54
    low, high = zsct["random listener"]["ci"]
    assert low < zsct["random listener"]["value"] < high
    assert {r["diagnostic"] for r in rows} == {"S2B-LM", "OracleLadder"}


def test_report_refuses_a_directory_as_out(logs: dict[str, Path], tmp_path: Path) -> None:
    result = runner.invoke(_app(), ["report", str(logs["rule"]), "--out", str(tmp_path)])
    assert result.exit_code == 2 and "is a directory" in result.output
    blocker = tmp_path / "file"
    blocker.write_text("x")
    nested = runner.invoke(_app(), ["report", str(logs["rule"]), "--out", f"{blocker}/r.html"])
    assert nested.exit_code == 2 and "is not a directory" in nested.output


def test_report_renders_in_headless_chromium(report: dict[str, object]) -> None:
    chromium = require_program(
        "chromium", "chromium-browser", install="Debian: apt-get install chromium"
    )
    details = report["details"]
    assert isinstance(details, dict)
    done = subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=5000",
            "--dump-dom",
            Path(details["html"]).as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    rendered = re.findall(r'<figure id="fig-[^"]+" data-rendered="(\w+)"', dom)
    assert rendered == ["yes"] * 4, dom[:2000]
    console = [line for line in done.stderr.splitlines() if "CONSOLE" in line]
    assert console == [], console


def test_report_has_the_ladder_analyses(report: dict[str, object]) -> None:
    details = report["details"]
    assert isinstance(details, dict)
    page = Path(details["html"]).read_text(encoding="utf-8")
    ladder = page[page.index("<h2>OracleLadder</h2>") :]
    # the always-zero student solves nothing: every McNemar test has p = 1
    assert "exact McNemar" in ladder and "<td>C2-random</td>" in ladder
    assert (
        "<td>scripted/always-zero</td><td>C2</td><td>C2-random</td><td>2</td><td>0</td>" in ladder
    )
    # its C1 reply "\boxed{0}" holds none of the 4 milestone answers (1 attempt per family)
    assert "<td>all</td><td>4</td><td>0/4 (0.0%)</td><td>0/4 (0.0%)</td>" in ladder
    assert "<td>solved alone</td><td>0</td><td>0/0 (n/a)</td>" in ladder


def test_report_refuses_to_overwrite_its_own_input_log(
    logs: dict[str, Path], tmp_path: Path
) -> None:
    directory = tmp_path / "run"
    shutil.copytree(logs["rule"].parent, directory)
    (log,) = directory.glob("*.eval")
    before = log.read_bytes()
    link = tmp_path / "link.eval"
    link.symlink_to(log)
    for out in (log, link):
        result = runner.invoke(_app(), ["report", str(directory), "--out", str(out), "--json"])
        assert result.exit_code == 2, result.output
        envelope = json.loads(result.stdout)
        assert envelope["status"] == "bad_input"
        assert str(out) in envelope["error"] and f"input log {log}" in envelope["error"]
    assert log.read_bytes() == before


def test_report_makes_the_folder_it_is_asked_to_write_into(
    logs: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "new" / "deeper" / "r.html"
    result = runner.invoke(_app(), ["report", str(logs["rule"]), "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    assert out.is_file()
