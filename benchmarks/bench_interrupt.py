"""Ctrl-C during an embedded-model run: seconds from SIGINT to process exit (issue 10, #7).

Two arms in the same run, each a real ``run s2b`` on the embedded model interrupted while it
decodes: ``gapscope.app.main.main`` (which freezes the heap before the interpreter shuts down) and
the bare Typer ``app`` (the interpreter's shutdown collection walks the whole heap). The aim
is an exit within one to two seconds; the target, a ratio in the same run, is that the frozen
heap exits at least ``MIN_SPEEDUP`` times as fast as the bare app (the fix must keep paying;
docs/report.md: 0.32 s vs 2.07 s, and 1.1 s vs 3.9 s on a loaded machine).
"""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.targets import Target

ARMS = {
    "gapscope main (heap frozen at exit)": "from gapscope.app.main import main; main()",
    "bare typer app (baseline)": "from gapscope.app.main import app; app()",
}
ARGS = ["run", "s2b", "--preset", "cat-10shot", "--seeds", "4", "--listener", "lm"]
DECODING_S = 5.0  # let generation get under way before the interrupt
MIN_SPEEDUP = 2.0


def exit_latency(entry: str) -> float:
    """Seconds between SIGINT and the exit of one interrupted embedded run of ``entry``."""
    with tempfile.TemporaryDirectory() as log_dir:
        process = subprocess.Popen(
            [sys.executable, "-c", f"import sys; sys.argv[0] = 'gapscope'; {entry}", *ARGS]
            + ["--log-dir", log_dir],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        deadline = time.monotonic() + 300
        while not list(Path(log_dir).glob("*.eval")):
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                raise RuntimeError("the run never started writing its log")
            time.sleep(0.2)
        time.sleep(DECODING_S)
        process.send_signal(signal.SIGINT)
        start = time.perf_counter()
        process.wait(timeout=120)
        return time.perf_counter() - start


def main(repeats: int = 2) -> list[Target]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    medians = {}
    for arm, entry in ARMS.items():
        medians[arm] = statistics.median(exit_latency(entry) for _ in range(repeats))
        print(f"{arm}: {medians[arm]:.2f} s from Ctrl-C to exit (median of {repeats})")
    frozen, bare = medians.values()
    print(f"ratio frozen / bare: {frozen / bare:.2f}")
    return [Target("Ctrl-C: bare app / frozen heap exit time", bare / frozen, MIN_SPEEDUP)]


if __name__ == "__main__":
    main()
