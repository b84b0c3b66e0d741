"""``make demo``: the main jobs on the two embedded models, offline, on a CPU.

1. S2B-LM, small ``demo`` preset: SmolLM2-135M-Instruct and Gemma 3 270M as the listener, and
   the rule-based reference listener; every score is printed.
2. OracleLadder on the first bundled families with one rollout per probe, for both models:
   the outcome table.
3. A short steering sweep on SmolLM2 (CLB direction and its orthogonal control at three
   alphas on one small episode): the dosage-curve figure's path.
4. The HTML report over all of the demo's logs (gap profile, figures, the dosage curve, the
   two models compared item by item); its path is the last line printed.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from rich.console import Console

from gapscope.analysis.diagnostics import load_all
from gapscope.analysis.ladder import build_report, model_run
from gapscope.analysis.logs import log_path
from gapscope.analysis.report import write_report
from gapscope.analysis.s2b import S2BRunSummary, summarize
from gapscope.analysis.terminal import print_ladder
from gapscope.app.kit import EMBEDDED_MODEL, run_task
from gapscope.ladder.task import oracle_ladder
from gapscope.models.embedded import GEMMA3_270M
from gapscope.s2b.task import s2b_lm

S2B_PRESET, S2B_SEEDS, S2B_MAX_TOKENS = "demo", 2, 160
LADDER_FAMILIES, LADDER_K, LADDER_MAX_TOKENS = 3, 1, 96
DEMO_MODELS = {"SmolLM2-135M": EMBEDDED_MODEL, "Gemma-3-270M": GEMMA3_270M.model_string}
"""Two offline models of different architectures, so the demo's logs can be compared."""
STEER_ALPHAS = (-4.0, 0.0, 1.0)


def _s2b(listener: str, model: str, log_dir: Path) -> S2BRunSummary:
    task = s2b_lm(preset=S2B_PRESET, seeds=S2B_SEEDS, listener=listener, max_tokens=S2B_MAX_TOKENS)
    return summarize(run_task(task, model, log_dir, max_samples=S2B_SEEDS))


def _report(locations: list[str], log_dir: Path) -> Path:
    """Write the report over the demo's logs; return the HTML file."""
    paths = [log_path(location) for location in locations]
    return write_report(load_all(paths), log_dir / "report.html").html


def _steering_sweep(log_dir: Path) -> list[str]:
    """Extract the CLB direction on a demo episode and sweep three alphas; print the figure.
    Returns the sweep's logs, which the report draws as a dosage curve."""
    from gapscope.app.sweep import SweepSpec, run_sweep

    spec = SweepSpec(
        model=EMBEDDED_MODEL,
        out=log_dir / "steer-demo",
        alphas=STEER_ALPHAS,
        controls=("orthogonal",),
        preset=S2B_PRESET,
        seeds=1,
        max_tokens=S2B_MAX_TOKENS,  # shorter, and even the baseline's answers do not parse
    )
    try:
        result = run_sweep(spec, lambda task, model: run_task(task, model, log_dir))
    except RuntimeError as error:
        print(f"\nSteering sweep FAILED: {error}")
        sys.exit(1)
    print(f"\nSteering sweep ({S2B_PRESET} preset, 1 episode, alphas -4, 0, +1):")
    for trend in result.trends:
        rho = "n/a" if trend.rho is None else f"{trend.rho:+.2f}"
        print(f"  {trend.direction:12s} Spearman rho {rho}  slope {trend.slope:+.2f} per alpha")
    print(f"  dosage curve: {result.files['png']} (and .svg; data {result.files['csv']})")
    return list(result.logs.values())


def main() -> None:
    log_dir = Path(os.environ.get("INSPECT_LOG_DIR", "logs")).resolve()
    runs = {f"{name} (embedded)": _s2b("lm", model, log_dir) for name, model in DEMO_MODELS.items()}
    runs["rule listener (reference)"] = _s2b("rule", "none", log_dir)
    ladders = {
        name: run_task(
            oracle_ladder(
                families="bundled", k=LADDER_K, limit=LADDER_FAMILIES, max_tokens=LADDER_MAX_TOKENS
            ),
            model,
            log_dir,
            max_samples=8,
        )
        for name, model in DEMO_MODELS.items()
    }

    print(f"\nS2B-LM, preset '{S2B_PRESET}', {S2B_SEEDS} seeds (mean ± sd over seeds):")
    for name, run in runs.items():
        if run.status != "success" or not run.summary:
            print(f"  {name:28s} FAILED ({run.status}); see {run.log_location}")
            continue
        s = run.summary
        print(
            f"  {name:28s} ZSCT {s['zsct']}  adj-ZSCT {s['adj_zsct']}  "
            f"strict {s['zsct_strict']}  unparsed {s['unparsed'].mean:.1f}"
        )
    print(f"\nOracleLadder, {LADDER_FAMILIES} bundled families, k = {LADDER_K}, embedded models:")
    done = [model_run(log, name) for name, log in ladders.items() if log.status == "success"]
    if done:
        print_ladder(build_report(done).to_dict(), Console(width=140))
    for name, log in ladders.items():
        if log.status != "success":
            print(f"  {name}: FAILED ({log.status}); see {log.location}")
    steered = _steering_sweep(log_dir)
    print(f"\nLogs in {log_dir}; open them with: .venv/bin/inspect view --log-dir {log_dir}")
    locations = [run.log_location for run in runs.values()] + [
        log.location for log in ladders.values()
    ]
    for location in locations:
        print(f"  {location}")
    print(f"\nReport: {_report(locations + steered, log_dir)}")
    statuses = [log.status for log in ladders.values()] + [run.status for run in runs.values()]
    if any(status != "success" for status in statuses):
        sys.exit(1)


if __name__ == "__main__":
    main()
