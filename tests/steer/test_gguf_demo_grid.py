"""The demo's steering grid scores the same in the default ``gguf`` format as in fp32 (slow:
runs the grid twice on SmolLM2-135M).

``make demo``'s dosage curve (the CLB direction and its orthogonal control at -4 and +1, and
the unsteered baseline, on one S2B-LM episode of the demo's size) is run once on
``gapscope/embedded`` as the provider loads it (``gguf``: the GGUF's codes, exact weights,
a different order of float sums in decode steps) and once on the same checkpoint without
its codes (fp32). Each run extracts its own CLB direction, so the extraction is compared too.
Every point of the curve (ZSCT, and the share of incoherent answers) must be equal.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gapscope.app.demo import demo_sweep_spec
from gapscope.app.kit import run_tasks
from gapscope.app.sweep import SweepResult, run_sweep
from gapscope.models.checkpoints import CheckpointError
from gapscope.models.embedded import embedded_checkpoint
from gapscope.models.gguf_codes import CODES_FILE, REPORT_FILE
from gapscope.models.task_steering import engine_for

pytestmark = pytest.mark.slow


def _grid(model: str, out: Path) -> SweepResult:
    spec = demo_sweep_spec(out / "sweep", model)
    return run_sweep(spec, lambda tasks, name: run_tasks(tasks, name, out / "logs"))


def _without_codes(checkpoint: Path, copy: Path) -> Path:
    """The checkpoint's files, linked, except its GGUF codes: it loads in fp32."""
    copy.mkdir()
    for item in checkpoint.iterdir():
        if item.name not in (CODES_FILE, REPORT_FILE):
            (copy / item.name).symlink_to(item)
    return copy


def test_the_demo_grid_scores_the_same_in_gguf_and_fp32(tmp_path: Path) -> None:
    try:
        checkpoint = embedded_checkpoint()
    except CheckpointError as error:
        pytest.skip(str(error))
    fp32_model = f"gapscope/hf/{_without_codes(checkpoint, tmp_path / 'fp32')}"
    if engine_for("gapscope/embedded").weight_format != "gguf":
        pytest.skip("the gguf kernel is unavailable here (the engine loaded fp32)")
    assert engine_for(fp32_model).weight_format == "float32"
    default = _grid("gapscope/embedded", tmp_path / "gguf")
    reference = _grid(fp32_model, tmp_path / "float32")
    points = [(p.direction, p.alpha, p.mean, p.incoherent) for p in default.points]
    assert len(points) == 5
    assert points == [(p.direction, p.alpha, p.mean, p.incoherent) for p in reference.points]
