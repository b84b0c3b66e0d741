"""The report's first screen, in headless Chromium at 1,280 and 1,920 px: the first table shows
every diagnostic's headline for every model without scrolling, and opens the page (before
the full gap profile, the plan and the notes). The screenshots are written beside the report
for a person to look at."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gapscope.app.main import app
from tests.environment import require_program

runner = CliRunner(env={"COLUMNS": "400"})
SCREEN_HEIGHT = 800
MEASURE = (
    "<script>(function(){var t=document.getElementById('glance');"
    "var r=t.getBoundingClientRect();"
    "function seen(q){return Array.from(t.querySelectorAll(q)).map(function(b){"
    "var c=b.getBoundingClientRect();return c.right<=innerWidth&&c.bottom<=innerHeight;});}"
    "var cells=seen('td b'),verdicts=seen('td .verdict');"
    "document.body.dataset.glance=[Math.ceil(r.right),Math.ceil(r.bottom),innerWidth,"
    "innerHeight,cells.length,cells.filter(Boolean).length,verdicts.length,"
    "verdicts.filter(Boolean).length,document.documentElement.scrollWidth].join(' ');})();"
    "</script>"
)
"""Measures the first table once laid out: its right and bottom edges, the window, how many
headline numbers and verdict lines it has and how many of each lie inside the window, and
the page's scroll width."""


@pytest.fixture(scope="module")
def page(logs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("first-screen") / "report.html"
    args = ["report", *(str(p.parent) for p in logs.values()), "--out", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return out


def _chromium(page: Path, width: int, *args: str) -> subprocess.CompletedProcess[str]:
    chromium = require_program(
        "chromium", "chromium-browser", install="Debian: apt-get install chromium"
    )
    return subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--window-size={width},{SCREEN_HEIGHT}",
            *args,
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("width", [1280, 1920])
def test_every_headline_is_on_the_first_screen(page: Path, width: int) -> None:
    measured = page.with_name(f"measured-{width}.html")
    html = page.read_text(encoding="utf-8")
    measured.write_text(html.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    done = _chromium(measured, width, "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r'data-glance="([\d ]+)"', done.stdout)
    assert found, done.stdout[:2000]
    measured_values = map(int, found[1].split())
    right, bottom, view_w, view_h, headlines, inside, verdicts, read, scroll_w = measured_values
    assert view_w == width and view_h > 600  # the window less Chromium's own frame
    assert headlines >= 3 and inside == headlines  # every model x diagnostic, all in view
    assert verdicts == headlines and read == verdicts  # each says its number in words
    assert right <= width and bottom <= view_h
    assert scroll_w <= width  # no sideways scrolling of the page
    assert html.index('id="glance"') < html.index("<h2>Gap profile</h2>")
    shot = page.with_name(f"first-screen-{width}.png")
    taken = _chromium(page, width, f"--screenshot={shot}")
    assert taken.returncode == 0 and shot.stat().st_size > 10_000, taken.stderr[-2000:]
