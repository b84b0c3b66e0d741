"""Verdict cache persistence, the backend factory, and the ``gapscope lean`` commands."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gapscope.app.lean import lean_app
from gapscope.lean.backend import LeanUnavailable
from gapscope.lean.cache import VerdictCache
from gapscope.lean.factory import open_backend, parse_spec
from gapscope.lean.local import LocalBackend
from gapscope.lean.verdict import LeanMessage, LeanVerdict, Status
from gapscope.lean.workspace import workspace_files, write_workspace
from tests.lean.conftest import FAKE_REPL

VALID = LeanVerdict(Status.VALID, (LeanMessage("info", "ok", 1, 0),), 0.2, ("propext",))


def test_cache_persists_settled_verdicts_only(tmp_path: Path) -> None:
    path = tmp_path / "c" / "verdicts.jsonl"
    cache = VerdictCache(path)
    cache.put("v4", "import X", "code", VALID)
    cache.put("v4", "", "slow", LeanVerdict(Status.TIMEOUT))
    cache.put("v4", "", "down", LeanVerdict(Status.SERVER_ERROR))
    with path.open("a") as handle:
        handle.write('{"key": "torn')
    reloaded = VerdictCache(path)
    assert len(reloaded) == 1
    assert reloaded.get("v4", "import X", "code") == VALID
    assert reloaded.get("v5", "import X", "code") is None


def test_nothing_configured_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GAPSCOPE_LEAN", raising=False)
    with pytest.raises(LeanUnavailable, match="elan") as info:
        open_backend()
    assert "gapscope lean setup" in str(info.value) and "kimina" in str(info.value)


@pytest.mark.parametrize("spec", ["nowhere", "local:", "kimina:host:80", "ssh:/x"])
def test_bad_specs(spec: str) -> None:
    with pytest.raises(ValueError, match=r"spec|URL"):
        parse_spec(spec)


def test_local_spec_from_env_with_repl_override(
    monkeypatch: pytest.MonkeyPatch, project: Path
) -> None:
    monkeypatch.setenv("GAPSCOPE_LEAN", f"local:{project}")
    monkeypatch.setenv("GAPSCOPE_LEAN_REPL_CMD", shlex.join([sys.executable, str(FAKE_REPL)]))
    with open_backend(max_workers=1, allow_unsandboxed=True) as backend:
        assert isinstance(backend, LocalBackend)
        verdict = backend.check("theorem t : True := trivial")
        assert verdict.valid and verdict.sandboxed is backend.sandboxed


def test_local_spec_without_lake_or_repl(monkeypatch: pytest.MonkeyPatch, project: Path) -> None:
    monkeypatch.delenv("GAPSCOPE_LEAN_REPL_CMD", raising=False)
    monkeypatch.setenv("PATH", "")
    with pytest.raises(LeanUnavailable, match="lake"):
        open_backend(f"local:{project}")
    with pytest.raises(LeanUnavailable, match="does not exist"):
        open_backend(f"local:{project}/missing")


def test_unreachable_kimina_spec_is_unavailable() -> None:
    with pytest.raises(LeanUnavailable, match="unreachable"):
        open_backend("kimina:http://127.0.0.1:9")


def test_doctor_json_exits_zero_and_names_every_check(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        lean_app,
        ["doctor", "--json", "--project", str(tmp_path), "--kimina-url", "http://127.0.0.1:9"],
    )
    assert result.exit_code == 0
    findings = {f["name"]: f for f in json.loads(result.stdout)["details"]}
    assert set(findings) == {
        *("elan", "lean", "lake", "sandbox", "toolchain", "repl", "kernel checker"),
        *("selftest", "kimina", "Lean REPL limits (defaults)", "T2 lake build limits (defaults)"),
    }
    for name, unit in (("Lean REPL", "REPL"), ("T2 lake build", "lake call")):
        limits = findings[f"{name} limits (defaults)"]
        mechanism = limits["data"]["mechanism"] if limits["data"] else "none"
        assert limits["found"].startswith(f"per {unit} ({mechanism})") or limits[
            "found"
        ].startswith(f"nothing per {unit}")
    assert not findings["repl"]["ok"] and "lake build" in findings["repl"]["fix"]


def test_doctor_plain_text() -> None:
    result = CliRunner().invoke(
        lean_app, ["doctor"], env={"GAPSCOPE_LEAN": "", "GAPSCOPE_KIMINA_URL": ""}
    )
    assert result.exit_code == 0 and "project" in result.output


def test_setup_writes_workspace_and_refuses_to_overwrite(tmp_path: Path) -> None:
    target = tmp_path / "ws"
    peano = tmp_path / "peano.lean"
    peano.write_text("inductive N where\n  | z : N\n")
    result = CliRunner().invoke(lean_app, ["setup", str(target), "--library", f"Peano={peano}"])
    assert result.exit_code == 0, result.output
    assert (target / "lean-toolchain").read_text().startswith("leanprover/lean4:v4.33.0")
    lakefile = (target / "lakefile.toml").read_text()
    assert "leanprover-community/repl" in lakefile and 'name = "Peano"' in lakefile
    assert 'defaultTargets = ["Peano"]' in lakefile
    assert (target / "Peano.lean").read_text() == peano.read_text()
    for command in ("lake update", "lake build", f"GAPSCOPE_LEAN=local:{target.resolve()}"):
        assert command in result.output
    again = CliRunner().invoke(lean_app, ["setup", str(target)])
    assert again.exit_code == 2 and "--force" in again.output  # bad input, like every command
    forced = CliRunner().invoke(lean_app, ["setup", str(target), "--force", "--json"])
    assert forced.exit_code == 0, forced.output
    details = json.loads(forced.stdout)["details"]
    assert str(target / "lean-toolchain") in details["written"]
    assert any("lake build" in step for step in details["next_steps"])
    bad = CliRunner().invoke(lean_app, ["setup", str(tmp_path / "b"), "--library", "peano"])
    assert bad.exit_code == 2 and "NAME=FILE" in bad.output


def test_a_bare_workspace_has_no_library_and_names_are_checked(tmp_path: Path) -> None:
    files = workspace_files()
    assert "defaultTargets = []" in files["lakefile.toml"]
    assert "lean_lib" not in files["lakefile.toml"]
    with pytest.raises(ValueError, match="Lean module name"):
        workspace_files(libraries={"bad-name": ""})


def test_workspace_takes_extra_files(tmp_path: Path) -> None:
    write_workspace(tmp_path, extra_files={"Lib/Peano.lean": "-- nng"})
    assert (tmp_path / "Lib" / "Peano.lean").read_text() == "-- nng"
    with pytest.raises(ValueError, match="relative"):
        write_workspace(tmp_path / "x", extra_files={"../escape.lean": ""})


def test_required_names_are_part_of_the_cache_key() -> None:
    cache = VerdictCache()
    cache.put("v4", "", "code", VALID)
    assert cache.get("v4", "", "code", ("official",)) is None
    cache.put("v4", "", "code", LeanVerdict(Status.MISSING_DECLARATION), ("official",))
    assert cache.get("v4", "", "code") == VALID
    missing = cache.get("v4", "", "code", ("official",))
    assert missing is not None and missing.status is Status.MISSING_DECLARATION
