"""Report generation time for 10 and for 100 logs (how it grows).

The logs are real S2B-LM runs of the rule and random listeners (no model needed), half each,
every log on its own episodes (``first_seed``) so the two "models" pair up item for item and
the report draws its comparison section too. Baseline, same run: the 10-log report; the ratio
of the 100-log time to it says whether the report grows linearly with the logs (ratio ~10) or
worse. Reading the logs is timed on its own, so the figures' and the HTML's share is visible.
Target: the ratio at most ``MAX_GROWTH`` (linear with a 20 % margin; a quadratic step is 100).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from inspect_ai import eval as inspect_eval

from benchmarks.targets import Target, at_most
from gapscope.analysis.diagnostics import load_all
from gapscope.analysis.report import write_report
from gapscope.s2b.task import s2b_lm

SEEDS_PER_LOG = 2
MAX_GROWTH = 12.0


def _write_logs(n: int, log_dir: Path) -> list[Path]:
    tasks = [
        s2b_lm(
            preset="cat-10shot",
            seeds=SEEDS_PER_LOG,
            first_seed=SEEDS_PER_LOG * (i // 2),
            listener=("rule", "random")[i % 2],
        )
        for i in range(n)
    ]
    logs = inspect_eval(tasks, model="none", log_dir=str(log_dir), display="none")
    return [Path(log.location) for log in logs]


def report_time(n: int, root: Path) -> dict[str, Any]:
    paths = _write_logs(n, root / f"logs-{n}")
    start = time.perf_counter()
    loaded = load_all(paths)
    read_s = time.perf_counter() - start
    report = write_report(loaded, root / f"report-{n}.html")
    total_s = time.perf_counter() - start
    return {
        "logs": n,
        "read_s": read_s,
        "total_s": total_s,
        "figures": len(report.figures),
        "compared_metrics": sum(len(c.metrics) for c in report.comparisons),
    }


def main() -> list[Target]:
    with tempfile.TemporaryDirectory() as tmp:
        small, large = (report_time(n, Path(tmp)) for n in (10, 100))
    for r in (small, large):
        print(
            f"{r['logs']:4d} logs: {r['total_s']:.2f} s total ({r['read_s']:.2f} s reading logs, "
            f"{r['total_s'] - r['read_s']:.2f} s comparisons + figures + HTML), "
            f"{1000 * r['total_s'] / r['logs']:.0f} ms/log, {r['figures']} figures"
        )
    print(
        f"100 vs 10 logs: x{large['total_s'] / small['total_s']:.1f} time for x10 logs "
        "(~10 means linear growth)"
    )
    growth = large["total_s"] / small["total_s"]
    return [at_most("report: 100-log / 10-log time", growth, MAX_GROWTH)]


if __name__ == "__main__":
    main()
