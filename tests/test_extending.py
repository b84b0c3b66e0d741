"""A diagnostic added from outside (the ``gapscope.diagnostics`` entry point) or in-tree (the
steps of docs/extending.md) reaches ``profile --dry-run``, ``report`` and ``compare``.

The example is ``examples/gapscope-parity``. Its entry points are read from its own
pyproject.toml into a temporary ``dist-info`` on ``sys.path``, so importlib.metadata finds
it as it finds an installed package; its logs are real runs of its task against scripted
models (offline).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from collections.abc import Iterator
from dataclasses import replace
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessage
from typer.testing import CliRunner

from gapscope.analysis import table
from gapscope.analysis.spec import BUDGETS, Inputs, SpecError
from gapscope.app.demo import DEMO_MODELS, demo_study
from gapscope.app.main import app
from gapscope.models.scripted import script

BUILTIN_NAMES = [spec.name for spec in table.BUILTINS]
"""The built-ins, read from the table: adding one edits no test."""
ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "gapscope-parity"
runner = CliRunner()


def _dist_info(where: Path, name: str, entry_points: dict[str, dict[str, str]]) -> None:
    """An installed distribution as importlib.metadata sees one: METADATA, entry_points.txt."""
    info = where / f"{name.replace('-', '_')}-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n")
    lines = [
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items())
        for group, eps in entry_points.items()
    ]
    (info / "entry_points.txt").write_text("\n".join(lines))


def _install(monkeypatch: pytest.MonkeyPatch, where: Path, **extra: dict[str, str]) -> None:
    """The example "installed" (its source and its declared entry points on ``sys.path``),
    plus ``extra`` entry points of another distribution; the table is read afresh."""
    declared = tomllib.loads((EXAMPLE / "pyproject.toml").read_text())["project"]["entry-points"]
    _dist_info(where, "gapscope-parity", declared)
    if extra:
        _dist_info(where, "gapscope-other", extra)
    monkeypatch.syspath_prepend(str(EXAMPLE / "src"))
    monkeypatch.syspath_prepend(str(where))
    table.table.cache_clear()  # and again after each test (_fresh_table)


@pytest.fixture(autouse=True)
def _fresh_table() -> Iterator[None]:
    yield
    table.table.cache_clear()


def _right(messages: list[ChatMessage]) -> str:
    number = int(re.findall(r"\d+", messages[-1].text)[0])
    return "even" if number % 2 == 0 else "odd"


def _words(output: str) -> str:
    """Printed output as one line of words (an error box wraps and frames its message)."""
    return " ".join(output.replace("│", " ").split())


def _json(args: list[str]) -> tuple[int, dict[str, Any]]:
    result = runner.invoke(app, [*args, "--json"])
    assert result.stdout, result.output
    return result.exit_code, json.loads(result.stdout)


@pytest.fixture(scope="module")
def parity_logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A real profile study of the parity diagnostic on two scripted models (one always
    right, one always saying "even"), run through the entry point: its logs by model."""
    where = tmp_path_factory.mktemp("site")
    logs = tmp_path_factory.mktemp("logs")
    models = {
        "right": script("parity-right", _right),
        "even": script("parity-even", lambda m: "even"),
    }
    with pytest.MonkeyPatch.context() as monkeypatch:
        _install(monkeypatch, where)
        args = ["profile", "--budget", "quick", "--diagnostics", "parity", "--log-dir", str(logs)]
        code, out = _json([*args, *(a for m in models.values() for a in ("--model", m))])
        table.table.cache_clear()
    assert code == 0, out
    names = {model: name for name, model in models.items()}
    return {names[_model_of(log)]: log for log in map(Path, out["logs"])}


def _read(log: Path) -> EvalLog:
    from inspect_ai.log import read_eval_log

    return read_eval_log(str(log), header_only=True)


def _model_of(log: Path) -> str:
    return _read(log).eval.model


def test_an_installed_diagnostic_is_planned_by_profile_dry_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _install(monkeypatch, tmp_path / "site")
    model = script("parity-plan", _right)
    args = ["profile", "--model", model, "--budget", "quick", "--dry-run"]
    code, out = _json([*args, "--log-dir", str(tmp_path)])
    assert code == 0, out
    rows = [t for t in out["details"]["plan"]["tasks"] if t["diagnostic"] == "parity"]
    assert [(r["label"], r["samples"], r["max_tokens"]) for r in rows] == [("numbers 1..6", 6, 16)]
    # every built-in is still planned beside it (the Lean ones listed as skipped)
    planned = {t["diagnostic"] for t in out["details"]["plan"]["tasks"]}
    skipped = {s["diagnostic"] for s in out["details"]["plan"]["skipped"]}
    assert planned | skipped == {*BUILTIN_NAMES, "parity"}


def test_an_installed_diagnostic_reaches_report_and_compare(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, parity_logs: dict[str, Path]
) -> None:
    _install(monkeypatch, tmp_path / "site")
    html = tmp_path / "report.html"
    code, out = _json(["report", *map(str, parity_logs.values()), "--out", str(html)])
    assert code == 0, out
    rows = {r["model"]: r["value"] for r in out["summary"] if r["diagnostic"] == "parity"}
    assert rows == {"scripted/parity-right": 100.0, "scripted/parity-even": 50.0}
    assert '<th colspan="1">parity</th>' in html.read_text()
    # it declares no verdict: its first-table cells count the items that passed
    glance = out["details"]["glance"]
    assert glance["scripted/parity-right"]["parity"]["verdict"] == "every item passed (6)"
    assert glance["scripted/parity-even"]["parity"]["verdict"] == "3 of 6 items passed"
    code, out = _json(["compare", str(parity_logs["right"]), str(parity_logs["even"])])
    assert code == 0, out
    [metric] = out["details"]["metrics"]
    assert (metric["diagnostic"], metric["n"], metric["a_only"], metric["b_only"]) == (
        "parity",
        6,
        3,
        0,
    )


def test_an_installed_diagnostic_runs_through_gapscope_run_with_its_task_args(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _install(monkeypatch, tmp_path / "site")
    listed = runner.invoke(app, ["run", "--help"])
    assert listed.exit_code == 0 and "parity" in listed.output
    model = script("parity-run", lambda m: "odd")
    args = ["run", "parity", "--model", model, "--log-dir", str(tmp_path), "-T", "limit=8"]
    code, out = _json([*args, "-T", "max_tokens=4", "--limit", "5"])
    assert code == 0, out
    # the spec's view: the share correct of the five numbers the limit kept (1..5: 3 odd)
    assert [(r["diagnostic"], r["metric"], r["n"]) for r in out["summary"]] == [
        ("parity", "accuracy", 5)
    ]
    assert out["summary"][0]["value"] == pytest.approx(60.0)
    assert out["details"]["correct"] == {"1": True, "2": False, "3": True, "4": False, "5": True}
    log = _read(Path(out["logs"][0]))
    assert (log.eval.task_args["limit"], log.eval.task_args["max_tokens"]) == (8, 4)
    shown = runner.invoke(app, args)
    assert shown.exit_code == 0 and "parity accuracy" in shown.output


PIP_INSTALLED = """
import json, sys
from typer.testing import CliRunner
import gapscope_parity
from gapscope.app.demo import demo_study
from gapscope.app.main import app
from gapscope.models.scripted import script

args = ["run", "parity", "--model", script("pip", lambda m: "odd"), "-T", "limit=2"]
result = CliRunner().invoke(app, [*args, "--log-dir", sys.argv[1], "--json"])
print(json.dumps({
    "package": gapscope_parity.__file__,
    "run": [result.exit_code, json.loads(result.stdout)],
    "demo": [(t.row.diagnostic, t.row.label) for t in demo_study().tasks],
}))
"""


def _printed_json(
    python: Path, script: str, args: list[str], env: dict[str, str], cwd: Path
) -> Any:
    """Run ``script`` in a fresh interpreter: the JSON it printed last."""
    done = subprocess.run(
        [python, "-c", script, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def _venv_over_this_one(venv: Path) -> Path:
    """A fresh venv that sees this environment's packages (pip, setuptools, gapscope's
    dependencies) after its own, so nothing is downloaded: its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = next(
        p for p in (venv / "bin" / "python", venv / "Scripts" / "python.exe") if p.exists()
    )
    ask = [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]
    purelib = subprocess.run(ask, check=True, capture_output=True, text=True).stdout.strip()
    (Path(purelib) / "outer.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


@pytest.mark.slow
def test_the_example_installed_by_pip_runs_and_is_in_the_demo_plan(tmp_path: Path) -> None:
    """The real install path (``pip install -e`` into a fresh venv, which builds the example's
    pyproject.toml and writes its entry points as pip does), not the stand-in dist-info of
    the tests above: ``run parity`` works and ``make demo``'s plan (:func:`demo_study`) has it
    for each demo model."""
    if int(metadata.version("setuptools").split(".")[0]) < 77:
        pytest.skip("the example's build backend (setuptools>=77) is not in this environment")
    source = tmp_path / "gapscope-parity"
    shutil.copytree(EXAMPLE, source)  # an editable install writes its egg-info beside the code
    python = _venv_over_this_one(tmp_path / "venv")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    install = ["-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps", "--no-index"]
    done = subprocess.run(
        [python, *install, "-e", str(source)], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    out = _printed_json(python, PIP_INSTALLED, [str(tmp_path / "logs")], env, tmp_path)
    assert Path(out["package"]).is_relative_to(source)
    code, result = out["run"]
    assert code == 0 and result["details"]["correct"] == {"1": True, "2": False}
    assert [(r["diagnostic"], r["metric"], r["n"]) for r in result["summary"]] == [
        ("parity", "accuracy", 2)
    ]
    rows = [label for name, label in out["demo"] if name == "parity"]
    assert rows == ["numbers 1..6"] * len(DEMO_MODELS)


def test_the_example_scores_the_whole_answer_not_a_word_inside_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _install(monkeypatch, tmp_path / "site")

    def hedging(messages: list[ChatMessage]) -> str:
        return "Odd." if _right(messages) == "odd" else "not even, odd"

    args = ["run", "parity", "--model", script("parity-hedge", hedging), "-T", "limit=4"]
    code, out = _json([*args, "--log-dir", str(tmp_path)])
    assert code == 0, out
    assert out["details"]["correct"] == {"1": True, "2": False, "3": True, "4": False}


def test_a_task_argument_the_task_does_not_take_is_refused_naming_the_ones_it_does(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _install(monkeypatch, tmp_path / "site")
    args = ["run", "parity", "--model", script("parity-bad", _right), "--log-dir", str(tmp_path)]
    code, out = _json([*args, "-T", "colour=red"])
    assert code == 2 and out["logs"] == []
    assert "unknown task argument 'colour'; the task takes: limit, max_tokens" in out["error"]
    code, out = _json([*args, "-T", "limit"])
    assert code == 2 and "expected key=value, got 'limit'" in out["error"]


def test_a_builtin_keeps_its_own_run_command() -> None:
    result = runner.invoke(app, ["run", "s2b", "--help"])
    assert result.exit_code == 0 and "--preset" in result.output
    result = runner.invoke(app, ["run", "nothing"])
    assert result.exit_code == 2 and "No such command 'nothing'" in result.output


def test_a_broken_entry_point_is_one_line_naming_it_and_the_builtins_still_load(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    broken = {"gapscope.diagnostics": {"broken": "gapscope_parity.missing:SPEC"}}
    _install(monkeypatch, tmp_path / "site", **broken)
    [problem] = table.load_problems()
    assert problem.startswith("entry point broken = gapscope_parity.missing:SPEC")
    assert "ModuleNotFoundError" in problem and "\n" not in problem
    assert [s.name for s in table.specs()] == [*BUILTIN_NAMES, "parity"]
    args = ["profile", "--model", script("parity-broken", _right), "--budget", "quick", "--dry-run"]
    result = runner.invoke(app, [*args, "--diagnostics", "s2b", "--log-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert f"warning: {problem}" in result.output and "Traceback" not in result.output
    result = runner.invoke(app, [*args, "--diagnostics", "broken", "--log-dir", str(tmp_path)])
    assert result.exit_code == 2 and "unknown diagnostic 'broken'" in _words(result.output)
    assert "entry point broken = gapscope_parity.missing:SPEC" in _words(result.output)


def test_an_unknown_diagnostic_names_the_known_ones(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["profile", "--diagnostics", "s2b,steer", "--dry-run", "--log-dir", str(tmp_path)]
    )
    assert result.exit_code == 2
    message = f"unknown diagnostic 'steer'; choose from {', '.join(BUILTIN_NAMES)}"
    assert message in _words(result.output)


def add_parity_in_tree(repo: Path) -> None:
    """docs/extending.md's in-tree steps for the example, applied to a copy of the repo."""
    source = EXAMPLE / "src" / "gapscope_parity"
    package = repo / "src" / "gapscope" / "parity"
    package.mkdir()
    for name, target in (
        ("__init__.py", package / "__init__.py"),
        ("task.py", package / "task.py"),
        ("diagnostic.py", repo / "src" / "gapscope" / "analysis" / "parity.py"),
    ):
        target.write_text((source / name).read_text().replace("gapscope_parity", "gapscope.parity"))
    table_file = repo / "src" / "gapscope" / "analysis" / "table.py"
    anchor = "from gapscope.analysis.report_sections import"
    parity = "from gapscope.analysis.parity import SPEC as PARITY"
    text = table_file.read_text().replace(anchor, f"{parity}\n{anchor}")
    builtins = re.compile(r"^(BUILTINS: tuple\[DiagnosticSpec, \.\.\.\] = \()(.*?)\)$", re.M | re.S)
    text, added = builtins.subn(lambda m: f"{m[1]}{m[2].rstrip().rstrip(',')}, PARITY)", text)
    assert added == 1, "no BUILTINS tuple in table.py"
    table_file.write_text(text)
    shutil.copy(EXAMPLE / "README.md", repo / "docs" / "parity.md")


def _changed(repo: Path) -> list[str]:
    """Every file of ``repo`` that is new or differs from this checkout's."""
    return sorted(
        str(p.relative_to(repo))
        for p in repo.rglob("*")
        if p.is_file()
        and "__pycache__" not in p.parts
        and (
            not (ROOT / p.relative_to(repo)).is_file()
            or (ROOT / p.relative_to(repo)).read_bytes() != p.read_bytes()
        )
    )


IN_TREE = """
import json, sys
from pathlib import Path
from typer.testing import CliRunner
from gapscope.app.demo import demo_study
from gapscope.app.main import app
from gapscope.models.scripted import script
from tests.test_faces import bypasses
from tests.test_layers import problems

root, logs = Path(sys.argv[1]), json.loads(sys.argv[2])
runner = CliRunner()
def run(*args):
    result = runner.invoke(app, [*args, "--json"])
    return result.exit_code, json.loads(result.stdout)
out = {
    "dry_run": run("profile", "--model", "scripted/x", "--diagnostics", "parity", "--budget",
                   "quick", "--dry-run", "--log-dir", str(root / "logs")),
    "report": run("report", *logs.values(), "--out", str(root / "report.html")),
    "compare": run("compare", logs["right"], logs["even"]),
    "run": run("run", "parity", "--model", script("tree", lambda m: "odd"), "-T", "limit=2",
               "--log-dir", str(root / "logs")),
    "demo": [(t.row.diagnostic, t.row.label) for t in demo_study().tasks],
    "layers": problems(root / "src" / "gapscope"),
    "faces": bypasses(root / "src" / "gapscope"),
}
print(json.dumps(out))
"""


def test_the_example_added_in_tree_touches_five_files_and_reaches_every_command(
    tmp_path: Path, parity_logs: dict[str, Path]
) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "src", repo / "src", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "tests", repo / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "docs", repo / "docs")
    add_parity_in_tree(repo)
    assert _changed(repo) == [
        "docs/parity.md",
        "src/gapscope/analysis/parity.py",
        "src/gapscope/analysis/table.py",
        "src/gapscope/parity/__init__.py",
        "src/gapscope/parity/task.py",
    ]
    env = {**os.environ, "PYTHONPATH": f"{repo / 'src'}{os.pathsep}{repo}"}
    logs = json.dumps({k: str(v) for k, v in parity_logs.items()})
    out = _printed_json(Path(sys.executable), IN_TREE, [str(repo), logs], env, repo)
    code, plan = out["dry_run"]
    assert code == 0 and [t["diagnostic"] for t in plan["details"]["plan"]["tasks"]] == ["parity"]
    code, report = out["report"]
    assert code == 0 and {r["diagnostic"] for r in report["summary"]} == {"parity"}
    code, compared = out["compare"]
    assert code == 0 and [m["metric"] for m in compared["details"]["metrics"]] == ["accuracy"]
    code, ran = out["run"]
    assert code == 0 and ran["details"]["correct"] == {"1": True, "2": False}
    assert [label for name, label in out["demo"] if name == "parity"] == ["numbers 1..6"] * 2
    assert out["layers"] == [] and out["faces"] == []
    # the tests that list the built-ins read them from the table: they pass with parity added
    tests = "unknown_diagnostic_names or no_spec_or_takes or does_not_define or every_budget"
    pytest_args = ["-q", "-p", "no:cacheprovider", "tests/test_extending.py", "-k", tests]
    checked = subprocess.run(
        [sys.executable, "-m", "pytest", *pytest_args],
        env=env,
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert checked.returncode == 0 and " passed" in checked.stdout, checked.stdout


def test_an_entry_point_that_is_no_spec_or_takes_a_name_is_left_out_with_its_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    group = table.ENTRY_POINT_GROUP
    declared = [
        metadata.EntryPoint("letters", "string:ascii_letters", group),
        metadata.EntryPoint("again", "gapscope.analysis.table:S2B", group),
    ]
    monkeypatch.setattr(metadata, "entry_points", lambda group: declared)
    table.table.cache_clear()
    assert table.load_problems() == (
        f"entry point letters = string:ascii_letters ({group}) did not load: "
        "TypeError: it gives str, not a DiagnosticSpec",
        f"entry point again = gapscope.analysis.table:S2B ({group}) is left out: "
        "its name 's2b' is already taken",
    )
    assert table.specs() == table.BUILTINS


def test_a_budget_a_spec_does_not_define_is_an_error_naming_the_ones_it_has() -> None:
    quick_only = replace(table.T2, name="t2-quick", budgets={"quick": {}})
    with pytest.raises(SpecError, match=r"t2-quick has no 'paper' budget \(it has: quick\)"):
        quick_only.tasks("paper", Inputs(lean="local:/x", data={"t2_data": "x"}), "m")


@pytest.mark.slow
def test_an_installed_diagnostic_is_steered_on_the_embedded_model_and_reported(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``run steer --diagnostic parity``: the CLB direction extracted from one small S2B-LM
    episode, the parity task steered through the spec's target, the curve read back by
    ``report`` from the logs alone."""
    from gapscope.models import engine_for
    from gapscope.models.checkpoints import CheckpointError

    try:
        engine_for("gapscope/embedded")
    except CheckpointError as error:
        pytest.skip(str(error))
    _install(monkeypatch, tmp_path / "site")
    out, logs = tmp_path / "sweep", tmp_path / "logs"
    args = ["run", "steer", "--diagnostic", "parity", "--out", str(out), "--log-dir", str(logs)]
    args += ["--preset", "demo", "--seeds", "1", "-S", "query_size=2", "-S", "k_shot=1"]
    args += ["--alphas", "-4,0,1", "--controls", "orthogonal", "-T", "limit=4"]
    code, result = _json(args)
    assert code == 0, result
    assert [(r["metric"], r["n"], r["unit"]) for r in result["summary"]] == [
        ("accuracy [baseline, alpha=0]", 4, "%"),
        ("accuracy [clb, alpha=-4]", 4, "%"),
        ("accuracy [clb, alpha=1]", 4, "%"),
        ("accuracy [orthogonal, alpha=-4]", 4, "%"),
        ("accuracy [orthogonal, alpha=1]", 4, "%"),
    ]
    curve = json.loads((out / "curve.json").read_text())
    assert (curve["diagnostic"], curve["metric"]) == ("parity", "accuracy")
    assert curve["spec"]["task_args"] == {"limit": 4}
    steered = _read(Path(result["details"]["logs"]["clb@-4"]))
    assert (steered.eval.task, steered.eval.task_args["alpha"]) == ("parity", -4.0)
    assert steered.eval.metadata is not None and steered.eval.metadata["steering"]["kind"] == "clb"
    code, report = _json(["report", str(logs), "--out", str(tmp_path / "report.html")])
    assert code == 0, report
    assert "parity dosage curve" in (tmp_path / "report.html").read_text()


def test_a_spec_without_a_demo_budget_runs_its_quick_one_in_the_demo(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    quick_only = replace(table.T2, name="t2-quick", budgets={"paper": {}, "quick": {"k": 7}})
    inputs = Inputs(lean="local:/x", data={"t2_data": "x"})
    seen: list[Any] = []

    def plan(budget: Any, given: Inputs, model: str) -> list[Any]:
        seen.append(budget)
        return []

    assert replace(quick_only, plan=plan).tasks("demo", inputs, "m") == ([], None)
    assert seen == [{"k": 7}]
    _install(monkeypatch, tmp_path / "site")
    rows = [(t.row.model, t.row.label) for t in demo_study().tasks if t.row.diagnostic == "parity"]
    assert rows == [(model, "numbers 1..6") for model in DEMO_MODELS]


def test_profile_help_lists_every_budget_of_the_contract() -> None:
    result = runner.invoke(app, ["profile", "--help"])
    assert result.exit_code == 0
    assert all(f"{name} (" in _words(result.output) for name in BUDGETS)


def test_a_diagnostic_named_twice_is_planned_once(tmp_path: Path) -> None:
    args = ["profile", "--model", script("twice", _right), "--budget", "quick", "--dry-run"]
    code, out = _json([*args, "--diagnostics", "s2b,s2b", "--log-dir", str(tmp_path)])
    assert code == 0, out
    once = _json([*args, "--diagnostics", "s2b", "--log-dir", str(tmp_path)])[1]
    assert out["details"]["plan"]["tasks"] == once["details"]["plan"]["tasks"]
