"""Real logs for the analysis tests, written once per session by the real tasks.

The rule and random listeners call no model, so S2B logs cost a second; the OracleLadder log
comes from a scripted student that always answers 0.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

from gapscope.ladder.task import oracle_ladder
from gapscope.models.scripted import script
from gapscope.s2b.task import s2b_lm

S2B_SEEDS = 6  # 6 x 54 = 324 query games: p < 0.001 between the rule and random listeners


def _write(task: object, model: str, log_dir: Path) -> Path:
    (log,) = inspect_eval(task, model=model, log_dir=str(log_dir), display="none")  # type: ignore[arg-type]
    assert log.status == "success", log.error
    return Path(log.location)


@pytest.fixture(scope="session")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``rule``, ``random`` (S2B, same episodes) and ``ladder`` logs, each in its own dir."""
    root = tmp_path_factory.mktemp("analysis-logs")
    out = {
        listener: _write(
            s2b_lm(preset="cat-10shot", seeds=S2B_SEEDS, listener=listener), "none", root / listener
        )
        for listener in ("rule", "random")
    }
    student = script("always-zero", lambda messages: "The answer is \\boxed{0}.")
    out["ladder"] = _write(
        oracle_ladder(families="bundled", k=1, limit=2, max_tokens=32), student, root / "ladder"
    )
    return out
