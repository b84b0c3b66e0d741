"""Reading results in the released panel format, and the report built from them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gapscope.analysis.ladder import build_report
from gapscope.analysis.ladder_panel import PanelError, read_panel, read_panels
from gapscope.app.main import app
from gapscope.ladder.families import Family, Milestone
from gapscope.ladder.probes import Condition
from gapscope.ladder.schema import MilestoneType

K = 8
# pid -> C1, C2, C3 counts and the Stage 0 count of each milestone
COUNTS = {
    "direct": ((3, 5, 8), (8, 8)),
    "roadmap": ((0, 2, 4), (1, 6)),
    "execution": ((0, 0, 1), (8, 8)),
    "composition": ((0, 0, 0), (2, 2, 5)),
    "capability": ((0, 0, 0), (0, 8)),
}


def _families() -> list[Family]:
    families = []
    for pid, (_, stage0) in COUNTS.items():
        milestones = [
            Milestone(f"{pid} {i}?", str(i), MilestoneType.COMPUTE, f"{pid} {i}")
            for i in range(len(stage0))
        ]
        families.append(Family(pid, f"{pid}?", "1", tuple(milestones)))
    return families


def _write(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _panel(tmp_path: Path, model: str, drop: str | None = None) -> tuple[Path, Path]:
    parent, stage0 = [], []
    for pid, ((c1, c2, c3), ms) in COUNTS.items():
        released = {
            "C1_direct": c1,
            "C2_descriptions": c2,
            "C3_gold_answers": c3,
            "C2_random": min(c1, 1),
            "C2_generic": 0,
            "C3_mismatched": c2,
        }
        for condition, n in released.items():
            if (pid, condition) != (pid, drop):
                parent.append(
                    {"model": model, "condition": condition, "pid": pid, "n_correct": n, "k": K}
                )
        for i, n in enumerate(ms):
            stage0.append(
                {"model": model, "pid": pid, "ms_idx": i, "ms_type": "COMPUTE", "n_correct": n}
                | {"k": K, "max_tokens": 16384}
            )
    return _write(tmp_path / f"{model}.jsonl", parent), _write(
        tmp_path / f"{model}_s0.jsonl", stage0
    )


def test_released_counts_give_the_taxonomy_of_each_family(tmp_path: Path) -> None:
    run = read_panel(*_panel(tmp_path, "m1"), _families())
    assert run.name == "m1"
    counts = {f.pid: f for f in run.families()}
    assert counts["roadmap"].c2 == 2 and counts["composition"].milestones == (2, 2, 5)
    report = build_report([run], n_resamples=100).to_dict()["models"]["m1"]
    assert report["outcomes"] == {
        "DIRECT": 1,
        "ROADMAP-NEEDED": 1,
        "ANSWERS-NEEDED": 1,
        "UNRECOVERED": 2,
    }
    assert report["gaps"] == {
        "none": 1,
        "roadmap": 1,
        "milestone-execution": 1,
        "composition": 1,
        "missing-milestone": 0,
        "capability": 1,
    }
    assert report["direct_accuracy"] == pytest.approx(3 / (5 * K))
    assert report["solved_by_condition"] == {
        "C1": 1,
        "C2": 2,
        "C3": 3,
        "C2-random": 1,
        "C2-generic": 0,
        "C3-mismatched": 2,
    }
    assert report["tau_sensitivity"]["3"]["DIRECT"] == 1
    assert report["tau_sensitivity"]["4"]["DIRECT"] == 0  # 3 correct C1 rollouts
    assert report["stage0_pass"] == 4


def test_a_milestone_the_family_does_not_test_is_ignored(tmp_path: Path) -> None:
    families = _families()
    composition = families[3]
    families[3] = Family(
        composition.pid,
        composition.parent_prompt,
        "1",
        composition.milestones,
        milestone_gold_invalid=(0,),
    )
    run = read_panel(*_panel(tmp_path, "m1"), families)
    assert {f.pid: f.milestones for f in run.families()}["composition"] == (2, 5)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda r: r | {"condition": "C4_other"}, "unknown condition 'C4_other'"),
        (lambda r: r | {"n_correct": 9}, r"n_correct must be an integer in \[0, 8\], got 9"),
        (lambda r: r | {"k": 0}, "k must be a positive integer"),
        (lambda r: {k: v for k, v in r.items() if k != "pid"}, "missing field"),
        (lambda r: r | {"pid": "elsewhere"}, "family elsewhere is not in the families file"),
        (lambda r: r | {"model": "other"}, "one model per file expected, found m1, other"),
    ],
)
def test_bad_parent_records_are_named(tmp_path: Path, edit: object, message: str) -> None:
    parent, stage0 = _panel(tmp_path, "m1")
    rows = [json.loads(line) for line in parent.read_text().splitlines()]
    rows[0] = edit(rows[0])  # type: ignore[operator]
    _write(parent, rows)
    with pytest.raises(PanelError, match=message):
        read_panel(parent, stage0, _families())


def test_missing_and_duplicate_records_are_errors(tmp_path: Path) -> None:
    with pytest.raises(PanelError, match="no C2 record for family direct"):
        read_panel(*_panel(tmp_path, "m1", drop="C2_descriptions"), _families())
    # a missing control is fine: controls are optional
    run = read_panel(*_panel(tmp_path, "m2", drop="C2_generic"), _families())
    assert Condition.C2_GENERIC not in run.solved_by_condition()  # not run, not 0 solved
    parent, stage0 = _panel(tmp_path, "m1")
    rows = stage0.read_text().splitlines()
    _write(stage0, [json.loads(r) for r in rows[1:]])
    with pytest.raises(PanelError, match="no record for milestone 0 of family direct"):
        read_panel(parent, stage0, _families())
    _write(stage0, [json.loads(r) for r in [rows[0], *rows]])
    with pytest.raises(PanelError, match="a second record"):
        read_panel(parent, stage0, _families())
    other_parent, other_stage0 = _panel(tmp_path, "m2")
    with pytest.raises(PanelError, match="is another model"):
        read_panel(parent, other_stage0, _families())
    with pytest.raises(PanelError, match="1 --panel file"):
        read_panels([parent], [], None)
    with pytest.raises(PanelError, match="--panel needs --families"):
        read_panels([parent], [stage0], None)
    assert other_parent.exists()


def _report_args(
    tmp_path: Path, models: tuple[str, ...], families: list[dict[str, object]] | None = None
) -> list[str]:
    """``ladder report --json`` over one released-format panel per model."""
    records = families if families is not None else [f.to_dict() for f in _families()]
    path = _write(tmp_path / "families.jsonl", records)
    args = ["ladder", "report", "--families", str(path), "--json", "--resamples", "100"]
    for model in models:
        parent, stage0 = _panel(tmp_path, model)
        args += ["--panel", str(parent), "--stage0", str(stage0)]
    return args


def test_ladder_report_reads_panels_next_to_logs(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, _report_args(tmp_path, ("alpha", "beta")))
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)["details"]
    assert set(report["models"]) == {"alpha", "beta"}
    assert report["models"]["beta"]["gaps"]["composition"] == 1
    assert report["transition_matrix"]["UNRECOVERED"]["UNRECOVERED"] == 2
    anchors = report["kendall_tau_composition_gap_across_anchors"]
    # roadmap, execution and composition: failed directly, every milestone solved alone
    assert anchors["screened"] == {"alpha": 3, "beta": 3}
    a, a0 = _panel(tmp_path, "alpha")
    bad = CliRunner().invoke(app, ["ladder", "report", "--panel", str(a), "--stage0", str(a0)])
    assert bad.exit_code != 0 and "--panel needs --families" in bad.output
    empty = CliRunner().invoke(app, ["ladder", "report"])
    assert empty.exit_code == 2 and "--panel" in empty.output


def test_ladder_report_prints_the_anchor_table(tmp_path: Path) -> None:
    families = _write(tmp_path / "families.jsonl", [f.to_dict() for f in _families()])
    args = ["ladder", "report", "--families", str(families), "--resamples", "100"]
    for model in ("alpha", "beta", "gamma"):
        parent, stage0 = _panel(tmp_path, model)
        args += ["--panel", str(parent), "--stage0", str(stage0)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    # three anchor pairs; identical models make every ranking a tie, so tau is undefined
    assert result.output.count("undefined") == 3


@pytest.mark.parametrize(
    ("version", "capability", "composition"),
    [("corrected", 0, 2), ("published", 1, 1)],
)
def test_families_version_decides_whether_a_withheld_milestone_counts(
    tmp_path: Path, version: str, capability: int, composition: int
) -> None:
    # the capability family fails its milestone 0 (0 of 8) and solves milestone 1; a
    # correction marks milestone 0's gold invalid. Corrected, Stage 0 rests on milestone 1
    # alone and passes, so the unrecovered family is a composition gap; published (as the
    # paper graded it), milestone 0 counts and the family is a capability gap
    records = [f.to_dict() for f in _families()]
    records[4]["milestone_gold_invalid"] = [0]
    args = _report_args(tmp_path, ("m1",), records)
    result = CliRunner().invoke(app, [*args, "--families-version", version])
    assert result.exit_code == 0, result.output
    details = json.loads(result.stdout)["details"]
    assert details["families_version"] == version
    gaps = details["models"]["m1"]["gaps"]
    assert (gaps["capability"], gaps["composition"]) == (capability, composition)


def test_ladder_report_labels_every_table_at_the_tau_asked_for(tmp_path: Path) -> None:
    # COUNTS at tau = 3: "direct" (C1 3) stays direct; "roadmap" (C2 2, C3 4) needs the
    # answers, and Stage 0 keeps its threshold of 1, so (1, 6) passes: a milestone-execution
    # gap; "execution" (C3 1) and "composition" (none) are unrecovered with Stage 0 passed
    # (composition gaps); "capability" stays a capability gap
    args = _report_args(tmp_path, ("alpha", "beta"))
    result = CliRunner().invoke(app, [*args, "--tau", "3"])
    assert result.exit_code == 0, result.output
    envelope = json.loads(result.stdout)
    report = envelope["details"]
    assert report["tau"] == 3
    alpha = report["models"]["alpha"]
    assert alpha["outcomes"] == {
        "DIRECT": 1,
        "ROADMAP-NEEDED": 0,
        "ANSWERS-NEEDED": 1,
        "UNRECOVERED": 3,
    }
    assert alpha["gaps"] == {
        "none": 1,
        "roadmap": 0,
        "milestone-execution": 1,
        "composition": 2,
        "missing-milestone": 0,
        "capability": 1,
    }
    assert alpha["any_probe"] == 2
    # C1 3 of 8 in "direct" only; C2: 5 ("direct"); C3: 8 and 4
    assert alpha["solved_by_condition"]["C1"] == 1
    assert alpha["solved_by_condition"]["C2"] == 1
    assert alpha["solved_by_condition"]["C3"] == 2
    assert report["transition_matrix"]["UNRECOVERED"]["UNRECOVERED"] == 3
    # each anchor screens the 3 families it fails in every direct attempt and passes Stage 0
    # on (the screen has no tau); the ranking counts their tau-3 composition gaps: 2
    anchors = report["kendall_tau_composition_gap_across_anchors"]
    assert anchors["screened"] == {"alpha": 3, "beta": 3}
    assert anchors["rankings"]["alpha"] == {"alpha": 2.0, "beta": 2.0}
    rows = {(r["model"], r["metric"]): r for r in envelope["summary"]}
    assert rows[("alpha", "gap composition")]["value"] == pytest.approx(40.0)
    assert rows[("alpha", "any probe")]["value"] == pytest.approx(40.0)
