"""The tracer's self-test probe: GapscopeMine.lean run on GapscopeProbe.lean, its output
compared with the known graph.

Without a real Lean, ``lake`` is tests/t2/fake_lake_mine.py, which writes the tracer's JSON
(the header of GapscopeMine.lean) from ``$FAKE_MINE_TRACE``: the right graph, an empty one, a
wrong one, or nothing at all. The real-Lean test skips with the reason.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from gapscope.lean import PROBE_PATH, ProgramRun
from gapscope.lean.factory import open_backend
from gapscope.lean.local import LocalBackend
from gapscope.lean.selftest import ENV_ALLOW_UNTESTED, SelfTestRequired
from gapscope.lean.selftest.runner import run_selftest
from gapscope.t2.declarations import split_declarations
from gapscope.t2.mining.probe import EXPECTED, TRACER_PROBE, probe_source, run_probe
from tests.lean.conftest import FAKE_REPL
from tests.t2.mine_project import fake_lake_bin, position

SOURCE = probe_source().read_text(encoding="utf-8")
RIGHT: dict[str, tuple[str, bool, str, list[str]]] = {
    # short name: (kind, is_prop, the declaration's exact text, uses), read off the file by hand
    "double": ("def", False, "def double (n : Nat) : Nat := n + n", []),
    "double_zero": ("theorem", True, "theorem double_zero : double 0 = 0 := rfl", ["double"]),
    "quadruple": (
        "def",
        False,
        "def quadruple (n : Nat) : Nat := double (double n)",
        ["double"],
    ),
    "quadruple_zero": (
        "theorem",
        True,
        "theorem quadruple_zero : quadruple 0 = 0 := rfl",
        ["quadruple"],
    ),
    "quadruple_zero_double": (
        "theorem",
        True,
        "theorem quadruple_zero_double : quadruple 0 = double 0 :=\n"
        "  Eq.trans quadruple_zero double_zero.symm",
        ["double_zero", "quadruple_zero", "quadruple", "double"],
    ),
    "unrelated": ("theorem", True, "theorem unrelated : (1 : Nat) + 1 = 2 := rfl", []),
}


def entries(graph: dict[str, tuple[str, bool, str, list[str]]]) -> list[dict[str, Any]]:
    """What GapscopeMine.lean writes for ``graph``'s declarations of GapscopeProbe.lean."""
    out = []
    for short, (kind, is_prop, text, uses) in graph.items():
        start = SOURCE.index(text)
        span = {"start": position(SOURCE, start), "end": position(SOURCE, start + len(text))}
        out.append(
            {
                "name": f"GapscopeProbe.{short}",
                "source_name": f"GapscopeProbe.{short}",
                "module": "GapscopeProbe",
                "kind": kind,
                "is_prop": is_prop,
                "range": span,
                "uses": [f"GapscopeProbe.{u}" for u in uses],
            }
        )
    return out


@pytest.fixture
def traced_as(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """``traced_as(declarations)``: the fake lake first on PATH, its tracer writing them."""
    monkeypatch.setenv("PATH", f"{fake_lake_bin(tmp_path)}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("GAPSCOPE_LEAN_SANDBOX", "off")
    monkeypatch.setenv("GAPSCOPE_LEAN_ALLOW_UNSANDBOXED", "1")
    fixture = tmp_path / "trace.json"
    monkeypatch.setenv("FAKE_MINE_TRACE", str(fixture))

    def write(declarations: list[dict[str, Any]]) -> None:
        fixture.write_text(json.dumps(declarations), encoding="utf-8")

    return write


def _probe(workspace: Path) -> ProgramRun:
    return run_probe(workspace, sandboxed=False, timeout_s=30.0)


def test_the_expected_graph_is_the_shipped_files() -> None:
    """EXPECTED names every declaration of GapscopeProbe.lean on the line (1-based, as
    Lean's ranges) it starts on."""
    found = {
        f"GapscopeProbe.{d.name}": d.start_line + 1  # split_declarations counts from 0
        for d in split_declarations(SOURCE)
        if d.is_declaration
    }
    assert found == {name: known.line for name, known in EXPECTED.items()}


def test_the_right_graph_passes(project: Path, traced_as: Any) -> None:
    traced_as(entries(RIGHT))
    assert _probe(project) == ProgramRun(True, "traced", "")


def test_an_empty_trace_fails_naming_why(project: Path, traced_as: Any) -> None:
    traced_as([])
    ran = _probe(project)
    assert (ran.ok, ran.status) == (False, "wrong_graph")
    assert ran.detail.startswith("the tracer wrote no declaration")


def test_a_wrong_graph_fails_naming_each_difference(project: Path, traced_as: Any) -> None:
    wrong = dict(RIGHT)
    kind, is_prop, text, uses = wrong["quadruple_zero_double"]
    wrong["quadruple_zero_double"] = (kind, is_prop, text, [u for u in uses if u != "double"])
    kind, is_prop, text, uses = wrong["double"]
    wrong["double"] = ("theorem", is_prop, text, uses)
    del wrong["unrelated"]
    traced_as(entries(wrong))
    ran = _probe(project)
    assert (ran.ok, ran.status) == (False, "wrong_graph")
    assert ran.detail.split("; ") == [
        "GapscopeProbe.unrelated: missing",
        "GapscopeProbe.double: kind theorem, expected def",
        "GapscopeProbe.quadruple_zero_double: uses ['GapscopeProbe.double_zero',"
        " 'GapscopeProbe.quadruple', 'GapscopeProbe.quadruple_zero'], expected"
        " ['GapscopeProbe.double', 'GapscopeProbe.double_zero', 'GapscopeProbe.quadruple',"
        " 'GapscopeProbe.quadruple_zero']",
    ]


def test_a_tracer_that_writes_nothing_fails(
    project: Path, traced_as: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    traced_as(entries(RIGHT))
    monkeypatch.setenv("FAKE_MINE_CRASH", "GapscopeProbe")  # Lean dies before it writes
    ran = _probe(project)
    assert (ran.ok, ran.status) == (False, "lean_error")
    assert "GapscopeProbe: " in ran.detail and "no trace (exit 134)" in ran.detail


def test_a_wrong_graph_fails_the_selftest_and_keeps_the_gate_shut(
    project: Path, traced_as: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV_ALLOW_UNTESTED)
    monkeypatch.setenv("GAPSCOPE_LEAN_REPL_CMD", f"{sys.executable} {FAKE_REPL}")
    monkeypatch.setenv("GAPSCOPE_LEAN_KERNEL_CHECKER", "none")
    backend = LocalBackend(
        project,
        repl_command=(sys.executable, str(FAKE_REPL)),
        sandbox=False,
        allow_unsandboxed=True,
        kernel_checker=None,
    )
    traced_as(entries(RIGHT))
    with backend:
        passing = run_selftest(backend, [], timeout_s=30.0, probes=[TRACER_PROBE])
    probed = [(r.case, r.path, r.status, r.ok) for r in passing.results if r.path == PROBE_PATH]
    assert probed == [("t2/mining/GapscopeMine.lean", PROBE_PATH, "traced", True)]
    assert passing.passed
    traced_as([])
    with backend:
        failing = run_selftest(backend, [], timeout_s=30.0, probes=[TRACER_PROBE])
    assert not failing.passed
    [failure] = failing.failures
    assert (failure.case, failure.path, failure.status) == (
        "t2/mining/GapscopeMine.lean",
        PROBE_PATH,
        "wrong_graph",
    )
    with pytest.raises(SelfTestRequired, match="failed"):
        open_backend(f"local:{project}")


WORKSPACE = os.environ.get("GAPSCOPE_LEAN", "").removeprefix("local:")


@pytest.mark.lean
@pytest.mark.skipif(
    shutil.which("lake") is None or not WORKSPACE or not Path(WORKSPACE).is_dir(),
    reason="needs lake on PATH and GAPSCOPE_LEAN=local:DIR naming a built workspace"
    " (Lean cannot be installed here)",
)
def test_the_real_tracer_writes_the_known_graph() -> None:
    ran = run_probe(Path(WORKSPACE), sandboxed=False, timeout_s=600.0)
    assert ran.ok, ran.detail
