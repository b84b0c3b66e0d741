"""``make demo``: the main job on the embedded model, offline, in a few minutes on a CPU.

Plays the small ``demo`` S2B-LM preset with SmolLM2-135M-Instruct as the listener and with the
rule-based reference listener, then prints both scores and where the logs are.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from inspect_ai import eval as inspect_eval

from gapscope.analysis.s2b import S2BRunSummary, summarize
from gapscope.cli import EMBEDDED_MODEL
from gapscope.s2b.task import s2b_lm

PRESET, SEEDS, MAX_TOKENS = "demo", 2, 24


def _run(listener: str, model: str, log_dir: Path) -> S2BRunSummary:
    task = s2b_lm(preset=PRESET, seeds=SEEDS, listener=listener, max_tokens=MAX_TOKENS)
    with contextlib.redirect_stdout(sys.stderr):
        logs = inspect_eval(task, model=model, log_dir=str(log_dir), max_samples=SEEDS)
    return summarize(logs[0])


def main() -> None:
    log_dir = Path(os.environ.get("INSPECT_LOG_DIR", "logs")).resolve()
    runs = {
        "SmolLM2-135M (embedded)": _run("lm", EMBEDDED_MODEL, log_dir),
        "rule listener (reference)": _run("rule", "none", log_dir),
    }
    print(f"\nS2B-LM, preset '{PRESET}', {SEEDS} seeds (ZSCT and adj-ZSCT, mean ± sd):")
    for name, run in runs.items():
        if run.status != "success" or not run.summary:
            print(f"  {name:28s} FAILED ({run.status}); see {run.log_location}")
            continue
        s = run.summary
        print(
            f"  {name:28s} ZSCT {s['zsct']}  adj-ZSCT {s['adj_zsct']}  "
            f"strict {s['zsct_strict']}  unparsed {s['unparsed'].mean:.1f}"
        )
    print(f"\nLogs: {log_dir}   (open them with: .venv/bin/inspect view --log-dir {log_dir})")
    for run in runs.values():
        print(f"  {run.log_location}")
    if any(run.status != "success" for run in runs.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
