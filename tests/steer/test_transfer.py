"""Transfer: the prove task steered (``--steer DIR --alpha A``) and the grid with
``--diagnostic prove``, on the tiny Llama with the fake Lean backend of the prove tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

from gapscope.app.kit import run_tasks
from gapscope.app.sweep import SweepSpec, run_sweep
from gapscope.models.engine import Engine
from gapscope.prove import task as prove_task
from gapscope.prove.task import prove
from tests.prove.test_task import FakeLean, _dataset
from tests.steer.conftest import random_vector


@pytest.fixture
def fake_lean(monkeypatch: pytest.MonkeyPatch) -> FakeLean:
    fake = FakeLean()
    monkeypatch.setattr(prove_task, "open_checker", lambda spec, **_: fake)
    return fake


def _direction(tiny64: Path, tmp_path: Path) -> Path:
    engine = Engine.from_pretrained(tiny64, device="cpu")
    return random_vector(engine, (1, 2)).save(tmp_path / "direction")


def test_prove_runs_steered_and_records_the_condition(
    tiny64: Path, tmp_path: Path, fake_lean: FakeLean
) -> None:
    direction = _direction(tiny64, tmp_path)
    completions = {}
    for alpha in (0.0, 6.0):
        task = prove(
            dataset=str(_dataset(tmp_path)),
            subset="aime",
            n=1,
            k="1",
            lean="fake",
            max_tokens=6,
            temperature=0.0,
            steer=str(direction),
            alpha=alpha,
        )
        log = inspect_eval(
            task, model=f"gapscope/hf/{tiny64}", log_dir=str(tmp_path / "logs"), display="none"
        )[0]
        assert log.status == "success", log.error
        assert log.eval.metadata is not None and log.eval.metadata["alpha"] == alpha
        assert log.samples is not None
        completions[alpha] = [s.output.completion for s in log.samples]
    assert completions[0.0] != completions[6.0]  # the steering reached the generation


def test_grid_accepts_the_prove_diagnostic(
    tiny64: Path, tmp_path: Path, fake_lean: FakeLean
) -> None:
    spec = SweepSpec(
        model=f"gapscope/hf/{tiny64}",
        out=tmp_path / "grid",
        alphas=(-3.0, 0.0),
        controls=("random",),
        steer=_direction(tiny64, tmp_path),
        diagnostic="prove",
        task_args={
            "dataset": str(_dataset(tmp_path)),
            "subset": "aime",
            "n": 2,
            "k": "1,2",
            "lean": "fake",
            "max_tokens": 4,
        },
    )
    result = run_sweep(spec, lambda tasks, model: run_tasks(tasks, model, tmp_path / "logs"))
    assert [(p.direction, p.alpha) for p in result.points] == [
        ("baseline", 0.0),
        ("clb", -3.0),
        ("random", -3.0),
    ]
    for point in result.points:
        assert point.n == 2  # the two AIME problems are the units
        assert "pass@2" in point.extra
        assert set(point.values) == {"aime_a", "aime_b"}  # per-problem solve rate (Figure 6)
        assert point.mean == point.extra["correct"] / point.extra["attempts"]  # per attempt
        assert set(point.per_unit["aime_a"]) == {"attempts", "correct", "pass@1", "pass@2"}
        assert any(key.startswith("share_") for key in point.extra)  # coherence classes
        assert "share_server_error" not in point.extra  # a failed check is no output class
        assert 0.0 <= point.incoherent <= 1.0
    assert (tmp_path / "grid" / "dosage.svg").is_file()
