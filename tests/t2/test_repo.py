"""The repository track against a fake ``lake``: private copies, dependents, verdicts."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log
from typer.testing import CliRunner, Result

from gapscope.app.main import app
from gapscope.lean import ENV_ALLOW_UNTESTED, Bounds
from gapscope.t2.audit import Defect, audit_records
from gapscope.t2.declarations import split_declarations
from gapscope.t2.evaluate import SampleResult
from gapscope.t2.extract import extract_answer
from gapscope.t2.project import ProjectIndex, dependents, imports_in
from gapscope.t2.records import T2Record
from gapscope.t2.repo import (
    RepoConfig,
    RepoSuccessors,
    Workspaces,
    evaluate_in_repo,
    file_text_of,
    project_dir,
)
from gapscope.t2.successors import record_successors, successors_in, target_identity

FAKE_LAKE = Path(__file__).parent / "fake_lake.py"
TARGET = "theorem base_eq (n : Nat) : n + 0 = n := by\n  simp"
BASE = (
    f"def helper : Nat := 1\n\n{TARGET}\n\ntheorem base_use : 2 + 0 = 2 := base_eq 2\n"
    "theorem base_eq_free : True := trivial\n"  # never uses the target: not a test unit
)
USER = (
    "import Lib.Base\n\ntheorem user_thm (m : Nat) : m + 0 + 0 = m := by\n  rw [base_eq, base_eq]\n"
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "checkout"
    (root / "Lib").mkdir(parents=True)
    (root / "lakefile.lean").write_text("-- fake project\n")
    (root / "Lib" / "Base.lean").write_text(BASE)
    (root / "Lib" / "User.lean").write_text(USER)
    (root / "Lib" / "Top.lean").write_text("import Lib.User\n")
    (root / "Lib" / "Other.lean").write_text("theorem other : True := trivial\n")
    return root


def _record(target: str = TARGET) -> T2Record:
    after = "\ntheorem user_thm (m : Nat) : m + 0 + 0 = m := by\n  rw [base_eq, base_eq]"
    return T2Record(
        id="Lib/Base.lean/base_eq.after_target_code=Lib/User.lean/user_thm",
        target_code=target,
        formal_language=target,
        natural_language="",
        target_code_name="Lib/Base.lean/base_eq",
        before_target_code="def helper : Nat := 1",
        after_target_code=after,
        header="import Lib.Base",
        dataset_name="checkout",
        line=1,
    )


@pytest.fixture
def lake_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    log = tmp_path / "lake.jsonl"
    monkeypatch.setenv("FAKE_LAKE_LOG", str(log))
    return log


def _evaluate(workspaces: Workspaces, code: str) -> SampleResult:
    record = _record()
    answer = extract_answer(f"```lean\n{code}\n```", target_identity(record))
    return evaluate_in_repo(record, answer, workspaces)


def _workspaces(repo: Path, **kwargs: float) -> Workspaces:
    config = RepoConfig(  # unsandboxed (explicitly): a sandbox would hide the log in its /tmp
        repo,
        lake=(sys.executable, str(FAKE_LAKE)),
        workers=1,
        allow_unsandboxed=True,
        sandbox=False,
        **kwargs,  # type: ignore[arg-type]
    )
    return Workspaces(config)


def test_dependents_are_transitive(repo: Path) -> None:
    assert dependents(repo, "Lib.Base") == ["Lib.Top", "Lib.User"]


def test_right_answer_builds_on_a_private_copy(repo: Path, lake_log: Path) -> None:
    workspaces = _workspaces(repo)
    try:
        result = _evaluate(workspaces, TARGET)
    finally:
        workspaces.close()
    assert (result.compiles, result.ta, result.ta_strict, result.graded) == (True, True, True, 1.0)
    assert result.successors == 3  # base_use, Lib.Top, Lib.User
    assert result.errors["modules_built"] == ["Lib.Base", "Lib.Top", "Lib.User"]
    calls = [json.loads(line) for line in lake_log.read_text().splitlines()]
    assert [c["args"][:2] for c in calls] == [["env", "lean"], ["build", "Lib.Base"]]
    assert all(not Path(c["cwd"]).is_relative_to(repo) for c in calls)
    assert (repo / "Lib" / "Base.lean").read_text() == BASE  # the user's checkout untouched


def test_a_broken_dependent_fails_ta_and_is_named(repo: Path, lake_log: Path) -> None:
    workspaces = _workspaces(repo)
    try:
        broken = _evaluate(workspaces, TARGET + " -- fake-breaks: user_thm, base_use")
        again = _evaluate(workspaces, TARGET)  # same private copy, restored in between
    finally:
        workspaces.close()
    assert (broken.compiles, broken.ta) == (True, False)
    assert broken.failing_successors == ("base_use", "Lib.User")
    assert broken.graded == pytest.approx(1 / 3)
    assert again.ta and again.graded == 1.0


def test_errors_before_a_flood_of_output_still_fail_their_successors(
    repo: Path, lake_log: Path
) -> None:
    """10 MB printed, the errors, 10 MB again (only the last 4 MB are kept for the log):
    the dependents the errors name fail; the build exits 1."""
    workspaces = _workspaces(repo)
    try:
        flooded = _evaluate(
            workspaces, f"{TARGET} -- fake-flood 10 -- fake-breaks: user_thm, base_use"
        )
    finally:
        workspaces.close()
    assert (flooded.compiles, flooded.ta, flooded.full_status) == (True, False, "exit 1")
    assert flooded.failing_successors == ("base_use", "Lib.User")
    assert (flooded.successors_passed, flooded.graded) == (1, pytest.approx(1 / 3))
    assert flooded.errors["build_errors"] == 2


def test_more_error_lines_than_are_kept_fail_every_unit_of_a_failed_build(
    repo: Path, lake_log: Path
) -> None:
    """20,001 forged errors: the ones naming a dependent may be past what is kept, so none
    passes, and TA (strict) is not granted."""
    workspaces = _workspaces(repo)
    try:
        forged = _evaluate(workspaces, f"{TARGET} -- fake-forge 20001")
    finally:
        workspaces.close()
    assert (forged.ta, forged.ta_strict, forged.graded) == (False, False, 0.0)
    assert forged.failing_successors == ("base_use", "Lib.Top", "Lib.User")
    assert forged.errors["build_errors"] is None


def test_sorry_passes_parity_not_strict(repo: Path, lake_log: Path) -> None:
    workspaces = _workspaces(repo)
    try:
        result = _evaluate(workspaces, "theorem base_eq (n : Nat) : n + 0 = n := by\n  sorry")
    finally:
        workspaces.close()
    assert (result.ta, result.ta_strict) == (True, False)


def test_a_build_past_its_timeout_fails(
    repo: Path, lake_log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_LAKE_DELAY", "5")
    workspaces = _workspaces(repo, build_timeout_s=0.3, compile_timeout_s=0.3)
    try:
        result = _evaluate(workspaces, TARGET)
    finally:
        workspaces.close()
    assert (result.compiles, result.ta, result.graded) == (False, False, 0.0)
    assert result.full_status == "timeout"


def test_audit_looks_for_the_target_in_its_file(repo: Path) -> None:
    missing = _record("theorem base_eq (n : Nat) : n + 0 = n := by\n  omega")
    result = (
        audit_records(  # the record holds one referencing declaration, as T2's research rows do
            [_record(), missing], file_text=lambda r: file_text_of(repo.parent, r), min_successors=1
        )
    )
    assert [f.defect for f in result.findings] == [
        Defect.DUPLICATE_ID,
        Defect.TARGET_NOT_FOUND_ONCE,
    ]
    assert result.valid == [_record()]


def _run_t2_repo(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, *extra: str
) -> Result:
    """``gapscope run t2 --repo`` with the fake ``lake`` first on PATH and a scripted model
    ``name`` that answers the record's own target."""
    from gapscope.models.scripted import script

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    lake = bin_dir / "lake"
    lake.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_LAKE}" "$@"\n')
    lake.chmod(lake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("GAPSCOPE_LEAN_ALLOW_UNSANDBOXED", "1")  # a sandbox would hide the log
    monkeypatch.setenv("GAPSCOPE_LEAN_SANDBOX", "off")
    data = tmp_path / "repo.jsonl"
    fields = {k: v for k, v in _record().__dict__.items() if k != "line"}
    data.write_text(json.dumps(fields) + "\n")
    model = script(name, lambda messages: f"```lean\n{TARGET}\n```")
    args = ["run", "t2", "--data", str(data), "--repo", str(repo.parent), "--context", "st"]
    args += ["--min-successors", "1", "--model", model, "--log-dir", str(tmp_path / "logs")]
    return CliRunner().invoke(app, [*args, *extra])


def test_run_t2_repo_with_a_lake_on_path(
    repo: Path, lake_log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = _run_t2_repo(repo, tmp_path, monkeypatch, "t2-repo", "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)["details"]
    assert summary["contexts"]["st"]["ta"]["estimate"] == 1.0


def test_the_repository_track_is_refused_untested_before_the_model_is_asked(
    repo: Path, lake_log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No known-answer case has gone through lake build: without --allow-untested the run
    stops (exit 2) with one line naming the flag, before any model call or lake run."""
    from gapscope.models.scripted import REQUESTS

    monkeypatch.delenv(ENV_ALLOW_UNTESTED)
    result = _run_t2_repo(repo, tmp_path, monkeypatch, "t2-repo-refused")
    assert result.exit_code == 2, result.output
    error = next(line for line in result.output.splitlines() if "error" in line)
    assert "--allow-untested" in error and "repository track" in error
    assert REQUESTS["t2-repo-refused"] == []
    assert not lake_log.exists()  # lake never ran
    assert not list((tmp_path / "logs").glob("*.eval"))


def test_run_t2_lake_bound_flags_reach_the_lake_calls_and_the_log(
    repo: Path, lake_log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gapscope.t2 import task as t2_task

    opened: list[RepoConfig] = []

    class Recorded(Workspaces):
        def __post_init__(self) -> None:
            opened.append(self.config)
            super().__post_init__()

    monkeypatch.setattr(t2_task, "Workspaces", Recorded)
    flags = ("--lake-memory-mb", "2048", "--lake-processes", "1024", "--lake-output-mb", "32")
    result = _run_t2_repo(repo, tmp_path, monkeypatch, "t2-repo-bounds", *flags)
    assert result.exit_code == 0, result.output
    assert [config.bounds for config in opened] == [Bounds(2048, 1024, 1.0, 32)]
    (path,) = (tmp_path / "logs").glob("*.eval")
    metadata = read_eval_log(str(path), header_only=True).eval.metadata or {}
    assert metadata["lake_bounds"] == {
        "memory_mb": 2048,
        "processes": 1024,
        "cpus": 1.0,
        "output_mb": 32,
    }
    refused = _run_t2_repo(repo, tmp_path, monkeypatch, "t2-repo-bounds", "--lake-memory-mb", "8")
    assert refused.exit_code == 2 and "--lake-memory-mb" in refused.output


def test_an_allowed_repository_run_is_labelled_untested_in_the_log_and_the_report(
    repo: Path, lake_log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV_ALLOW_UNTESTED)
    result = _run_t2_repo(repo, tmp_path, monkeypatch, "t2-repo-allowed", "--allow-untested")
    assert result.exit_code == 0, result.output
    assert "selftest=false: 1 of 1 checked samples judged on an untested path (lake-build)" in (
        result.output
    )
    assert "UNTESTED (selftest=false): 1 of 1 checked T2 samples" in result.output
    (path,) = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(path))
    assert log.eval.metadata is not None and log.eval.metadata["untested"] == "lake-build"
    assert log.samples is not None
    assert [s.scores["t2_scorer"].metadata["selftest"] for s in log.samples] == [False]  # type: ignore[index]
    html = tmp_path / "report.html"
    made = CliRunner().invoke(app, ["report", str(path), "--out", str(html)])
    assert made.exit_code == 0, made.output
    assert "UNTESTED (selftest=false): 1 of 1 checked T2 samples were judged by the repository" in (
        html.read_text(encoding="utf-8")
    )


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"id": "{outside}/base_eq"}, "id"),  # absolute
        ({"id": "../outside.lean/base_eq"}, "id"),
        ({"id": "Lib/../../outside.lean/base_eq"}, "id"),
        ({"dataset_name": ".."}, "dataset_name"),
        ({"dataset_name": "../elsewhere"}, "dataset_name"),
    ],
)
def test_a_record_naming_a_file_outside_the_project_is_refused(
    repo: Path, lake_log: Path, tmp_path: Path, changes: dict[str, str], field: str
) -> None:
    outside = tmp_path / "outside.lean"
    outside.write_text(BASE)
    fields = _record().__dict__ | {k: v.format(outside=outside) for k, v in changes.items()}
    record = T2Record(**fields)
    result = audit_records([record], file_text=lambda r: file_text_of(repo, r))
    assert [f.defect for f in result.findings] == [Defect.INVALID_RECORD]
    counted = audit_records(
        [record], file_text=lambda r: file_text_of(repo, r), successors_of=RepoSuccessors(repo)
    )  # the project-wide count does not read outside the project either
    assert counted.findings == result.findings
    assert f"line 1 ({record.id}): {field}:" in result.findings[0].detail
    workspaces = _workspaces(repo)
    answer = extract_answer(f"```lean\n{TARGET} -- fake-error\n```", target_identity(record))
    try:
        with pytest.raises(ValueError, match=f"{field}:"):
            evaluate_in_repo(record, answer, workspaces)
    finally:
        workspaces.close()
    assert not lake_log.exists()  # nothing was written, nothing was built
    assert outside.read_text() == BASE


def test_a_symlinked_target_file_is_refused_not_written_through(
    repo: Path, lake_log: Path, tmp_path: Path
) -> None:
    own = tmp_path / "users-own" / "Base.lean"
    own.parent.mkdir()
    own.write_text(BASE)
    (repo / "Lib" / "Base.lean").unlink()
    (repo / "Lib" / "Base.lean").symlink_to(own)
    result = audit_records([_record()], file_text=lambda r: file_text_of(repo.parent, r))
    assert [f.defect for f in result.findings] == [Defect.INVALID_RECORD]
    assert "Lib/Base.lean is a symbolic link" in result.findings[0].detail
    workspaces = _workspaces(repo)
    try:
        with pytest.raises(ValueError, match="symbolic link"):
            _evaluate(workspaces, TARGET + " -- fake-error")
    finally:
        workspaces.close()
    assert not lake_log.exists()
    assert own.read_text() == BASE


_DRIVER = """
import sys, threading
from pathlib import Path
from tests.t2.test_repo import TARGET, _evaluate, _workspaces
workspaces = _workspaces(Path(sys.argv[1]))
print(workspaces._base, flush=True)
worker = threading.Thread(target=_evaluate, args=(workspaces, TARGET + " -- fake-error"))
worker.start()
worker.join()
"""


def test_sigterm_during_lake_puts_the_original_file_back(
    repo: Path, lake_log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import signal
    import subprocess

    monkeypatch.setenv("FAKE_LAKE_DELAY", "120")
    root = Path(__file__).parents[2]
    env = os.environ | {"PYTHONPATH": f"{root / 'src'}{os.pathsep}{root}"}
    driver = subprocess.Popen(
        [sys.executable, "-c", _DRIVER, str(repo)], stdout=subprocess.PIPE, text=True, env=env
    )
    lake_pid = None
    base = repo / "no-copy-yet"
    try:
        assert driver.stdout is not None
        base = Path(driver.stdout.readline().strip())
        copy = base / "worker_0" / "checkout" / "Lib" / "Base.lean"
        # lake has started (its call is logged), so the generated code is in the file
        while driver.poll() is None and not (lake_log.exists() and lake_log.read_text()):
            time.sleep(0.05)
        assert "fake-error" in copy.read_text()
        lake_pid = json.loads(lake_log.read_text().splitlines()[0])["pid"]
        driver.send_signal(signal.SIGTERM)
        assert driver.wait() == -signal.SIGTERM
        assert copy.read_text() == BASE
    finally:
        driver.kill()
        driver.wait()
        if lake_pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(lake_pid, signal.SIGKILL)
        shutil.rmtree(base, ignore_errors=True)


def test_successors_are_counted_across_the_project_in_import_order(repo: Path) -> None:
    """base_eq is used by base_use (its own file) and user_thm (Lib/User.lean); Lib/Top.lean
    imports User and uses user_thm: a dependent of a dependent, in a third file."""
    (repo / "Lib" / "Top.lean").write_text(
        "import Lib.User\n\ntheorem top_thm : 3 + 0 + 0 = 3 := user_thm 3\n"
    )
    (repo / "Lib" / "Other.lean").write_text("theorem other (base_eq : Nat) : True := trivial\n")
    record = _record()
    found = RepoSuccessors(repo.parent)(record)  # root holding the project "checkout"
    assert [(s.name, s.direct) for s in found] == [
        ("base_use", True),
        ("user_thm", True),
        ("top_thm", False),
    ]
    assert [s.name for s in record_successors(record)] == ["user_thm"]  # the file track: its after
    checked = audit_records(
        [record],
        file_text=lambda r: file_text_of(repo, r),
        min_successors=3,
        successors_of=RepoSuccessors(repo),
    )
    assert checked.findings == [] and checked.valid == [record]
    moved = replace(record, target_code=TARGET + " ")  # not in its file: nothing to count
    assert RepoSuccessors(repo)(moved) == []


def test_a_source_folder_named_like_the_project_is_not_a_project(tmp_path: Path) -> None:
    root = tmp_path / "Foo"
    (root / "Foo").mkdir(parents=True)
    (root / "lakefile.toml").write_text("name = 'Foo'\n")
    record = replace(_record(), dataset_name="Foo")
    assert project_dir(root, record) == root  # Foo/Foo is the sources, not a project
    assert project_dir(tmp_path, record) == root  # a folder of projects


def test_imports_of_the_module_system_are_imports() -> None:
    text = (
        "module\n\npublic import Lib.A\npublic meta import Lib.B\nimport all Lib.C\n"
        "import Lib.D Lib.E\n"
    )
    assert imports_in(text) == {"Lib.A", "Lib.B", "Lib.C", "Lib.D", "Lib.E"}
    assert imports_in("-- import Lib.F\ntheorem importing : True := trivial\n") == set()


def test_the_indexed_project_search_finds_what_a_full_scan_finds(tmp_path: Path) -> None:
    """ProjectIndex follows a name index instead of lexing every dependent declaration per
    record; on a random project of chained modules both give the same successors."""
    import random

    rng = random.Random(7)
    root = tmp_path / "P"
    (root / "P").mkdir(parents=True)
    (root / "lakefile.toml").write_text("name = 'P'\n")
    targets: dict[str, tuple[int, str]] = {}  # name -> (module number, its text)
    for m in range(8):
        lines = [f"import P.M{k}" for k in range(m) if rng.random() < 0.6]
        for d in range(6):
            name, used = f"c{m}_{d}", rng.sample(sorted(targets), min(len(targets), 2))
            uses = " ".join(used) or "0"
            code = f"theorem {name} : True := -- {name}\n  (fun _ => trivial) ({uses})"
            targets[name] = (m, code)
            lines.append(code)
        (root / "P" / f"M{m}.lean").write_text("\n\n".join(lines) + "\n")
    index, found = ProjectIndex(root), []
    for name, (m, code) in list(targets.items())[:24]:
        record = replace(_record(code), id=f"P/M{m}.lean/{name}", dataset_name="P")
        text = (root / "P" / f"M{m}.lean").read_text()
        later = split_declarations(text[text.index(code) + len(code) :])
        for other in index.in_import_order(set(dependents(root, f"P.M{m}"))):
            later += split_declarations(
                (root / other.replace(".", "/")).with_suffix(".lean").read_text()
            )
        scan = [s.name for s in successors_in(later, target_identity(record))]
        found.append(len(scan))
        assert [s.name for s in index.successors(record, f"P.M{m}")] == scan
    assert max(found) >= 5 and min(found) == 0  # deep chains and isolated targets both
