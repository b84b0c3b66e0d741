"""``make demo``: the main jobs on the embedded model, offline, in a few minutes on a CPU.

1. S2B-LM, small ``demo`` preset: SmolLM2-135M-Instruct as the listener, and the rule-based
   reference listener; both scores are printed.
2. OracleLadder on the first bundled families with one rollout per probe: the outcome table.
3. A short steering sweep (CLB direction and its orthogonal control at three alphas on one
   small episode): the dosage-curve figure's path.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from rich.console import Console

from gapscope.analysis.ladder import build_report, model_run
from gapscope.analysis.s2b import S2BRunSummary, summarize
from gapscope.cli import EMBEDDED_MODEL
from gapscope.clikit import run_task
from gapscope.ladder.cli import print_report
from gapscope.ladder.task import oracle_ladder
from gapscope.s2b.task import s2b_lm

S2B_PRESET, S2B_SEEDS, S2B_MAX_TOKENS = "demo", 2, 160
LADDER_FAMILIES, LADDER_K, LADDER_MAX_TOKENS = 3, 1, 96
STEER_ALPHAS, STEER_MAX_TOKENS = (-4.0, 0.0, 1.0), 64


def _s2b(listener: str, model: str, log_dir: Path) -> S2BRunSummary:
    task = s2b_lm(preset=S2B_PRESET, seeds=S2B_SEEDS, listener=listener, max_tokens=S2B_MAX_TOKENS)
    return summarize(run_task(task, model, log_dir, max_samples=S2B_SEEDS))


def _steering_sweep(log_dir: Path) -> None:
    """Extract the CLB direction on a demo episode and sweep three alphas; print the figure."""
    from gapscope.steer.sweep import SweepSpec, run_sweep

    spec = SweepSpec(
        model=EMBEDDED_MODEL,
        out=log_dir / "steer-demo",
        alphas=STEER_ALPHAS,
        controls=("orthogonal",),
        preset=S2B_PRESET,
        seeds=1,
        max_tokens=STEER_MAX_TOKENS,
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


def main() -> None:
    log_dir = Path(os.environ.get("INSPECT_LOG_DIR", "logs")).resolve()
    runs = {
        "SmolLM2-135M (embedded)": _s2b("lm", EMBEDDED_MODEL, log_dir),
        "rule listener (reference)": _s2b("rule", "none", log_dir),
    }
    ladder = run_task(
        oracle_ladder(
            families="bundled", k=LADDER_K, limit=LADDER_FAMILIES, max_tokens=LADDER_MAX_TOKENS
        ),
        EMBEDDED_MODEL,
        log_dir,
        max_samples=8,
    )

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
    print(f"\nOracleLadder, {LADDER_FAMILIES} bundled families, k = {LADDER_K}, embedded model:")
    if ladder.status == "success":
        print_report(
            build_report([model_run(ladder, "SmolLM2-135M")]).to_dict(), Console(width=140)
        )
    else:
        print(f"  FAILED ({ladder.status}); see {ladder.location}")
    _steering_sweep(log_dir)
    print(f"\nLogs in {log_dir}; open them with: .venv/bin/inspect view --log-dir {log_dir}")
    for location in [run.log_location for run in runs.values()] + [ladder.location]:
        print(f"  {location}")
    if ladder.status != "success" or any(run.status != "success" for run in runs.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
