"""``make demo``'s peak memory: the resident set of the whole demo, against ``PEAK_TARGET_GB``.

The demo holds both embedded models (SmolLM2-135M and Gemma 3 270M, in the ``gguf`` format:
0.11 and 0.29 GB of codes where fp32 took 0.54 and 1.07 GB), their KV prefix
caches (each bounded in bytes, ``cache_mb``), Inspect's runs and the report: a laptop must run
it beside other work. The demo runs in a child process under ``/usr/bin/time -v`` (GNU time),
whose "Maximum resident set size" is the peak over the process and its children; its logs go
to a scratch directory, so no earlier study is resumed.

It takes the whole demo's time (15-20 minutes on 2 cores), and ``make bench`` runs it:
``GAPSCOPE_BENCH_DEMO=0`` skips it, visibly (``SKIPPED`` with that reason). Target (required
when it runs): peak RSS at most ``PEAK_TARGET_GB``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from benchmarks.targets import Skipped, Target, at_most, skipped

PEAK_TARGET_GB = 3.0
RUN_FLAG = "GAPSCOPE_BENCH_DEMO"
GNU_TIME = "/usr/bin/time"
_PEAK_LINE = re.compile(r"Maximum resident set size \(kbytes\): (\d+)")


def peak_rss_gb(time_report: str) -> float:
    """The peak resident set, in GB, from GNU time's ``-v`` report."""
    found = _PEAK_LINE.search(time_report)
    if found is None:
        raise ValueError("no 'Maximum resident set size' line in the time -v report")
    return int(found.group(1)) * 1024 / 1e9


def measure() -> tuple[float, float]:
    """Run the demo once; its peak RSS (GB) and wall seconds."""
    with tempfile.TemporaryDirectory() as log_dir:
        environment = {**os.environ, "INSPECT_LOG_DIR": log_dir, "HF_HUB_OFFLINE": "1"}
        start = time.perf_counter()
        done = subprocess.run(
            [GNU_TIME, "-v", sys.executable, "-m", "gapscope.app.demo"],
            env=environment,
            capture_output=True,
            text=True,
            check=False,
        )
        wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"the demo failed (exit {done.returncode}): {done.stderr[-2000:]}")
    return peak_rss_gb(done.stderr), wall


def main() -> list[Target | Skipped]:
    if os.environ.get(RUN_FLAG) == "0":
        return [skipped("make demo peak RSS", f"{RUN_FLAG}=0 (it runs the whole demo)")]
    if shutil.which(GNU_TIME) is None and not os.path.exists(GNU_TIME):
        return [skipped("make demo peak RSS", f"{GNU_TIME} (GNU time) is not installed")]
    peak, wall = measure()
    print(f"make demo: peak RSS {peak:.2f} GB, {wall:.0f} s wall")
    return [at_most(f"make demo peak RSS {peak:.2f} GB / 1 GB", peak, PEAK_TARGET_GB)]


if __name__ == "__main__":
    main()
