"""Ctrl-C during a real embedded-model run (issue 10, #7): before the fix the process decoded on
for minutes and ended in an IndexError traceback; now it stops, exits 130 and says how to
resume."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # loads the embedded model


def test_ctrl_c_stops_an_embedded_run_and_prints_the_resume_line(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "gapscope.app.main", "run", "s2b", "--preset", "cat-10shot"]
    command += ["--seeds", "4", "--listener", "lm", "--log-dir", str(tmp_path)]
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # a shell's background job ignores SIGINT; a user's foreground one does not
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 180
    while not list(tmp_path.glob("*.eval")) and time.monotonic() < deadline:
        time.sleep(0.5)
    time.sleep(5)  # generation is under way
    process.send_signal(signal.SIGINT)
    try:
        _, err = process.communicate(timeout=60)  # before the fix: still decoding after 120 s
    except subprocess.TimeoutExpired:
        process.kill()
        pytest.fail("the run was still alive 60 s after Ctrl-C")
    assert process.returncode == 130, err[-2000:]
    (log,) = tmp_path.glob("*.eval")
    assert "Traceback" not in err
    assert f"interrupted: {log} did not finish; rerun the same command to resume it" in err
    assert f"or inspect eval-retry {log}" in err
