"""The grid and the task options end to end on the tiny Llama (``gapscope/hf/<dir>``)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from typer.testing import CliRunner

from gapscope.app.kit import Interrupted
from gapscope.app.main import app
from gapscope.app.sweep import SweepSpec, parse_alphas
from gapscope.models.direction import SteeringVector
from gapscope.models.scripted import script
from gapscope.models.task_steering import SteeringUnsupported, engine_for
from gapscope.s2b.task import s2b_lm
from gapscope.steer.protocol import EXTRACTION_FIRST_SEED

runner = CliRunner()
SMALL = ["--preset", "demo", "--seeds", "1", "-S", "query_size=2", "-S", "k_shot=1"]


def test_extract_then_sweep_from_the_command_line(tiny64: Path, tmp_path: Path) -> None:
    model = f"gapscope/hf/{tiny64}"
    direction = tmp_path / "clb"
    result = runner.invoke(
        app,
        ["steer", "extract", "--out", str(direction), "--model", model, "--layers", "1,3"]
        + ["--json", *SMALL],
    )
    assert result.exit_code == 0, result.output
    vector = SteeringVector.load(direction)
    extracted = json.loads(result.stdout)["details"]
    assert extracted["fingerprint"] == vector.fingerprint and extracted["card"]["pairs"] == 2
    assert vector.layers == (1, 3)
    assert vector.card.pairs == 2 and vector.card.preset == "demo"
    assert vector.card.seeds == (EXTRACTION_FIRST_SEED,)  # held out from run s2b's seeds 0..
    assert vector.card.model.model_id == model

    out = tmp_path / "sweep"
    args = ["run", "steer", "--out", str(out), "--model", model, "--steer", str(direction)]
    args += ["--alphas", "-2,0", "--controls", "orthogonal", "--max-tokens", "4"]
    args += ["--log-dir", str(tmp_path / "logs"), "--json", *SMALL]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    envelope = json.loads(result.stdout)
    document = envelope["details"]
    assert envelope["command"] == "run steer" and len(envelope["logs"]) == 3
    assert [row["metric"] for row in envelope["summary"]] == [
        "ZSCT [baseline, alpha=0]",
        "ZSCT [clb, alpha=-2]",
        "ZSCT [orthogonal, alpha=-2]",
    ]
    cells = [(p["direction"], p["alpha"]) for p in document["points"]]
    assert cells == [("baseline", 0.0), ("clb", -2.0), ("orthogonal", -2.0)]
    assert [t["direction"] for t in document["trends"]] == ["clb", "orthogonal"]
    for name in ("curve.csv", "curve.json", "dosage.png", "dosage.svg"):
        assert (out / name).is_file(), name
    rows = list(csv.DictReader((out / "curve.csv").open()))
    assert len(rows) == 3 and "adj_zsct" in rows[0]
    ortho = SteeringVector.load(out / "directions" / "orthogonal")
    assert ortho.card.kind == "orthogonal" and ortho.card.control_seed == 0
    assert len(document["logs"]) == 3

    # the report finds the same curve in the log directory alone, from the runs' own records;
    # an unsteered run of the same settings made by hand is the model's profile, not the curve
    logs = str(tmp_path / "logs")
    by_hand = ["run", "s2b", "--model", model, "--max-tokens", "4", "--log-dir", logs, "--json"]
    result = runner.invoke(app, [*by_hand, *SMALL])
    assert result.exit_code == 0, result.output
    (hand_log,) = json.loads(result.stdout)["logs"]
    report = tmp_path / "report.html"
    result = runner.invoke(app, ["report", logs, "--out", str(report), "--json"])
    assert result.exit_code == 0, result.output
    envelope = json.loads(result.stdout)
    (curve,) = envelope["details"]["dosage"]
    assert curve["base"] == vector.fingerprint and curve["model"] == model
    assert curve["logs"] == document["logs"]  # the sweep's own baseline, not the hand run
    assert [(p["direction"], p["alpha"], p["mean"]) for p in curve["points"]] == [
        (p["direction"], p["alpha"], p["mean"]) for p in document["points"]
    ]
    assert [t["rho"] for t in curve["trends"]] == [t["rho"] for t in document["trends"]]
    assert "dosage" in envelope["details"]["figures"]
    assert 'id="fig-dosage"' in report.read_text()
    assert {row["log"] for row in envelope["summary"]} == {hand_log}
    assert any("3 steering runs" in note for note in envelope["details"]["notes"])

    result = runner.invoke(app, ["compare", logs, logs, "--json"])
    assert result.exit_code == 0, result.output
    compared = json.loads(result.stdout)["details"]
    assert [m["p_mcnemar"] for m in compared["metrics"]] == [1.0]  # the hand run with itself
    assert "A: 3 steering runs left out" in " ".join(compared["notes"])


def test_ctrl_c_in_a_sweep_names_the_log_to_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gapscope.app import steer as steer_cli

    def interrupted(*args: object, **kwargs: object) -> None:
        raise Interrupted(str(tmp_path / "run.eval"))

    monkeypatch.setattr(steer_cli, "run_tasks", interrupted)
    monkeypatch.setattr("gapscope.app.sweep.prepare_directions", lambda spec: {})
    args = ["run", "steer", "--out", str(tmp_path / "o"), "--log-dir", str(tmp_path), "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 130
    envelope = json.loads(result.stdout)
    assert envelope["status"] == "interrupted" and envelope["logs"] == [str(tmp_path / "run.eval")]
    assert envelope["details"]["resume"] == f"inspect eval-retry {tmp_path / 'run.eval'}"


def test_steering_an_api_model_is_refused_with_advice(tmp_path: Path, tiny64: Path) -> None:
    with pytest.raises(SteeringUnsupported, match="gapscope/embedded"):
        engine_for("openai-api/vllm/some-model")
    direction = tmp_path / "d"
    runner.invoke(
        app,
        ["steer", "extract", "--out", str(direction), "--model", f"gapscope/hf/{tiny64}", *SMALL],
    )
    model = script("api", lambda messages: "Answer: same")
    log = inspect_eval(
        s2b_lm(preset="demo", seeds=1, steer=str(direction), alpha=1.0),
        model=model,
        log_dir=str(tmp_path),
        display="none",
    )[0]
    assert log.status == "error"
    assert log.error is not None and "steering needs a model whose weights" in log.error.message


def test_bad_steering_options_fail_before_running(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a direction directory"):
        s2b_lm(preset="demo", seeds=1, steer=str(tmp_path), alpha=1.0)
    with pytest.raises(ValueError, match="lm listener only"):
        s2b_lm(preset="demo", seeds=1, listener="rule", steer=str(tmp_path), alpha=1.0)
    with pytest.raises(ValueError, match="finite"):
        s2b_lm(preset="demo", seeds=1, alpha=float("nan"))
    with pytest.raises(ValueError, match=r"seeds must be in \[1, 10000\]"):
        s2b_lm(preset="demo", seeds=10**9)
    result = runner.invoke(app, ["run", "s2b", "--seeds", "1", "--steer", str(tmp_path)])
    assert result.exit_code == 2 and "not a direction" in " ".join(result.output.split())
    with pytest.raises(ValueError, match="comma list of numbers"):
        parse_alphas("-1,x")
    with pytest.raises(ValueError, match="unknown control"):
        SweepSpec(model="m", out=tmp_path, controls=("mirror",))
    needs = r"--diagnostic prove needs -T dataset=\.\.\. \(miniF2F JSONL or hub id\)"
    with pytest.raises(ValueError, match=needs):
        SweepSpec(model="m", out=tmp_path, diagnostic="prove")
    with pytest.raises(ValueError, match="t2 declares no steering target; steerable: s2b, prove"):
        SweepSpec(model="m", out=tmp_path, diagnostic="t2")
