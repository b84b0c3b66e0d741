"""``gapscope t2 mine`` on a small fake project whose dependency graph is known by hand
(``tests/t2/mine_project.py``), traced by a fake ``lake`` that speaks the metaprogram's JSON."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gapscope.app.main import app
from gapscope.models.scripted import REQUESTS, script
from gapscope.t2.audit import audit_records
from gapscope.t2.mining.graph import DependencyGraph
from gapscope.t2.mining.targets import Filters, cut, header_end, make_record, mine_targets
from gapscope.t2.mining.trace import TraceConfig, run_ray, trace_project
from gapscope.t2.mining.traced import TraceError, parse_batch, parse_declaration
from gapscope.t2.project import OutsideProject, project_modules
from gapscope.t2.prompting import load_nl_file
from gapscope.t2.records import FIELDS, load_records
from gapscope.t2.repo import RepoSuccessors, file_text_of
from tests.environment import require_lean_sandbox
from tests.t2.mine_project import (
    BASIC,
    DECLARATIONS,
    FAKE_LAKE,
    fake_lake_bin,
    make_project,
    trace_entries,
)

runner = CliRunner()

FUNNEL = {
    "declarations traced": 9,
    "project declarations": 9,
    "eligible kinds": 8,
    "successors>=2": 3,
    "depth>=2": 3,
    "source cut out": 3,
    "written": 3,
}
"""double (6 successors, depth 4), double_eq (4, 3) and double_twice (2, 2) pass the paper's
filters; double_twice's successors (quad_eq, quad_spec) are all in Proj/More.lean, which the
audit counts as the repository track does: across the modules that import its file."""


@pytest.fixture
def mining(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The fake project, with the fake lake first on PATH and Lean unsandboxed (the sandbox's
    private /tmp would hide the fake's call log)."""
    project = make_project(tmp_path)
    monkeypatch.setenv("PATH", f"{fake_lake_bin(tmp_path)}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_MINE_TRACE", str(tmp_path / "trace.json"))
    monkeypatch.setenv("FAKE_LAKE_LOG", str(tmp_path / "lake.log"))
    monkeypatch.setenv("GAPSCOPE_LEAN_SANDBOX", "off")
    monkeypatch.setenv("GAPSCOPE_LEAN_ALLOW_UNSANDBOXED", "1")
    return project


def lake_calls(project: Path) -> list[list[str]]:
    log = project.parent / "lake.log"
    if not log.is_file():
        return []
    return [json.loads(line)["args"] for line in log.read_text().splitlines()]


def mine(project: Path, *extra: str, tracer: str = "gapscope") -> Any:
    """``gapscope t2 mine PROJECT --json`` (gapscope's tracer unless told: LeanDojo may be
    installed where the tests run)."""
    out = project.parent / "out" / "records.jsonl"
    command = ["t2", "mine", str(project), "--out", str(out), "--json", "--tracer", tracer]
    return runner.invoke(app, [*command, *extra])


def envelope(result: Any) -> dict[str, Any]:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_successors_are_transitive_dependents_and_depth_the_longest_chain() -> None:
    graph = DependencyGraph.of(parse_declaration(e, "test") for e in trace_entries())
    successors = {name: len(graph.successors(name)) for name in graph.dependents}
    assert successors == {
        "double": 6,
        "double_eq": 4,
        "double_twice": 2,
        "quad_eq": 1,
        "quad": 1,
        "double_add": 0,
        "quad_spec": 0,
        "Pair": 0,
        "lonely": 0,
    }
    assert graph.successors("double_twice") == {"quad_eq", "quad_spec"}
    depths = graph.depths()
    assert {n: depths[n] for n in ("double", "double_eq", "double_twice", "quad", "lonely")} == {
        "double": 4,
        "double_eq": 3,
        "double_twice": 2,
        "quad": 1,
        "lonely": 0,
    }


def test_a_mutual_cycle_is_one_node_for_depth() -> None:
    def decl(name: str, uses: list[str]) -> Any:
        span = {"start": {"line": 1, "column": 0}, "end": {"line": 1, "column": 1}}
        raw = {"name": name, "module": "M", "kind": "inductive", "is_prop": False, "range": span}
        return parse_declaration(raw | {"uses": uses}, "test")

    # A and B mention each other (a mutual inductive); C uses A; D uses C.
    graph = DependencyGraph.of(
        [decl("A", ["B"]), decl("B", ["A"]), decl("C", ["A"]), decl("D", ["C"])]
    )
    assert graph.successors("A") == {"B", "C", "D"}
    assert graph.depths() == {"A": 2, "B": 2, "C": 1, "D": 0}


def test_the_tracer_output_is_validated_field_by_field() -> None:
    entry = trace_entries()[0]
    with pytest.raises(TraceError, match=r"declarations\[0\] \(double\): is_prop"):
        parse_batch({"declarations": [entry | {"is_prop": "no"}]}, "batch")
    with pytest.raises(TraceError, match="range ends"):
        parse_batch(
            {
                "declarations": [
                    entry
                    | {"range": {"start": entry["range"]["end"]} | {"end": entry["range"]["start"]}}
                ]
            },
            "batch",
        )
    with pytest.raises(TraceError, match="the tracer failed: boom"):
        parse_batch({"error": "boom"}, "batch")


def test_header_and_exact_cut() -> None:
    assert BASIC[: header_end(BASIC)] == "import Mathlib.Tactic\n"
    assert header_end("theorem t : True := trivial\n") == 0
    moduled = "module\n\npublic import A.B\n-- the rest\nimport_like : True := trivial\n"
    assert moduled[: header_end(moduled)] == "module\n\npublic import A.B\n"
    entry = parse_declaration(trace_entries()[1], "test")  # double_eq
    start, end = cut(BASIC, entry)  # type: ignore[misc]
    assert BASIC[start:end].startswith("theorem double_eq") and BASIC[end:].startswith("\n\n")
    moved = parse_declaration(trace_entries()[2] | {"name": "double_eq"}, "test")
    assert cut(BASIC, moved) == "the text at its range declares double_add, not double_eq"
    outside = parse_declaration(
        trace_entries()[1]
        | {"range": {"start": {"line": 99, "column": 0}} | {"end": {"line": 99, "column": 3}}},
        "test",
    )
    assert "not in the file" in str(cut(BASIC, outside))
    quoted = (
        "namespace N\ntheorem «my thm» : True := trivial\ntheorem _root_.top : True := trivial\n"
    )

    def at(line: int, name: str, text: str) -> Any:
        source = text.split("\n")[line - 1]
        span = {"start": {"line": line, "column": 0}, "end": {"line": line, "column": len(source)}}
        raw = {"name": name, "module": "M", "kind": "theorem", "is_prop": True, "range": span}
        return parse_declaration(raw | {"uses": []}, "test")

    assert isinstance(cut(quoted, at(2, "N.«my thm»", quoted)), tuple)
    assert isinstance(cut(quoted, at(3, "top", quoted)), tuple)


def test_declarations_outside_the_project_are_counted_then_left_out() -> None:
    entries = [parse_declaration(e, "test") for e in trace_entries()]
    foreign = parse_declaration(
        trace_entries()[0] | {"name": "Nat.foo", "module": "Mathlib.X"}, "t"
    )
    files = {"Proj/Basic.lean": BASIC}
    mined = mine_targets(
        [*entries, foreign],
        {"Proj.Basic": "Proj/Basic.lean", "Proj.More": "Proj/More.lean"},
        lambda path: files.get(path),
        "Proj",
        Filters(min_successors=2, min_depth=2),
    )
    assert mined.funnel["declarations traced"] == 10
    assert mined.funnel["project declarations"] == 9
    # with min_depth 0 and min_successors 0 every cuttable target of Basic is a candidate
    loose = mine_targets(
        entries,
        {"Proj.Basic": "Proj/Basic.lean"},
        lambda path: files.get(path),
        "Proj",
        Filters(min_successors=0, min_depth=0),
    )
    assert loose.funnel["eligible kinds"] == 5  # double, double_eq, double_add, twice, lonely


def test_private_declarations_of_the_same_name_are_different_nodes() -> None:
    a = "private theorem aux : True := trivial\ntheorem a1 : True := aux\ntheorem a2 : True := a1\n"
    b = "private theorem aux : True := trivial\n"

    def decl(module: str, name: str, line: int, text: str, uses: list[str]) -> Any:
        end = {"line": line, "column": len(text.split("\n")[line - 1])}
        span = {"start": {"line": line, "column": 0}, "end": end}
        source = name.rsplit(".", 1)[-1]
        raw = {"name": name, "source_name": source, "module": module, "kind": "theorem"}
        return parse_declaration(raw | {"is_prop": True, "range": span, "uses": uses}, "t")

    traced = [
        decl("A", "_private.A.0.aux", 1, a, []),
        decl("A", "a1", 2, a, ["_private.A.0.aux"]),
        decl("A", "a2", 3, a, ["a1"]),
        decl("B", "_private.B.0.aux", 1, b, []),
    ]
    files = {"A.lean": a, "B.lean": b}
    mined = mine_targets(traced, {"A": "A.lean", "B": "B.lean"}, files.get, "P")
    assert [(t.record.id, t.successors) for t in mined.targets] == [("A.lean/aux", 2)]
    assert {"target": "_private.B.0.aux", "stage": "successors>=2", "detail": "0 successor(s)"} in (
        mined.dropped
    )


def test_mine_writes_t2_records_the_split_and_the_funnel(mining: Path) -> None:
    result = envelope(mine(mining))
    details = result["details"]
    assert details["funnel"] == FUNNEL
    assert [(t["id"], t["successors"], t["depth"], t["prop"]) for t in details["targets"]] == [
        ("Proj/Basic.lean/double", 6, 4, False),
        ("Proj/Basic.lean/double_eq", 4, 3, True),
        ("Proj/Basic.lean/double_twice", 2, 2, True),
    ]
    assert {d["target"]: d["stage"] for d in details["dropped"]}["double_add"] == "successors>=2"
    out = mining.parent / "out"
    rows = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    assert [list(r) for r in rows] == [list(FIELDS)] * 3
    target = "theorem double_eq (n : Nat) : double n = 2 * n := by\n  unfold double; omega"
    assert rows[1] == {
        "id": "Proj/Basic.lean/double_eq",
        "target_code": target,
        "formal_language": BASIC,
        "natural_language": "",
        "target_code_name": "theorem double_eq",
        "before_target_code": "\n/-- Doubling. -/\ndef double (n : Nat) : Nat := n + n\n\n",
        "after_target_code": BASIC[BASIC.index(target) + len(target) :],
        "header": "import Mathlib.Tactic\n",
        "dataset_name": "Proj",
    }
    assert rows[0]["target_code"] == "/-- Doubling. -/\ndef double (n : Nat) : Nat := n + n"
    for row in rows:
        parts = row["header"] + row["before_target_code"] + row["target_code"]
        assert parts + row["after_target_code"] == row["formal_language"]
    prop = (out / "records.prop.jsonl").read_text().splitlines()
    noprop = (out / "records.noprop.jsonl").read_text().splitlines()
    assert [json.loads(x)["id"] for x in prop] == [
        "Proj/Basic.lean/double_eq",
        "Proj/Basic.lean/double_twice",
    ]
    assert [json.loads(x)["id"] for x in noprop] == ["Proj/Basic.lean/double"]
    loaded = load_records(out / "records.jsonl")
    checked = audit_records(
        loaded.records,
        loaded.problems,
        lambda r: file_text_of(mining, r),
        successors_of=RepoSuccessors(mining),
    )
    assert checked.findings == [] and len(checked.valid) == 3
    in_file_only = audit_records(
        loaded.records[:2], loaded.problems
    )  # the file track reads the file
    assert in_file_only.findings == [] and len(in_file_only.valid) == 2
    # the audit command agrees: with --repo all three, on the file alone double_twice has none
    records = str(out / "records.jsonl")
    audited = runner.invoke(app, ["t2", "audit", records, "--repo", str(mining), "--json"])
    assert audited.exit_code == 0 and json.loads(audited.stdout)["details"]["valid"] == 3
    alone = json.loads(runner.invoke(app, ["t2", "audit", records, "--json"]).stdout)["details"]
    assert alone["valid"] == 2 and alone["ids"]["no_mentioning_successor"] == [
        "Proj/Basic.lean/double_twice"
    ]


def test_the_trace_is_cached_and_reused_while_the_sources_are_unchanged(mining: Path) -> None:
    envelope(mine(mining))
    calls = lake_calls(mining)
    assert calls[0] == ["build"] and len(calls) == 2  # one build, one batch of both modules
    assert calls[1][-2:] == ["Proj.Basic", "Proj.More"]
    cache = mining.parent / "out" / "records.trace.json"
    assert set(json.loads(cache.read_text())["modules"]) == {"Proj.Basic", "Proj.More"}
    again = envelope(mine(mining, "--force"))
    assert len(lake_calls(mining)) == 2  # nothing built, nothing traced
    assert again["details"]["trace"]["batches_traced"] == 0
    assert again["details"]["funnel"] == FUNNEL
    (mining / "Proj" / "More.lean").write_text(
        (mining / "Proj" / "More.lean").read_text() + "\n-- edited\n"
    )
    envelope(mine(mining, "--force"))
    assert len(lake_calls(mining)) == 4  # the changed sources are traced again


def test_a_module_that_fails_costs_only_itself_and_is_retried(
    mining: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_MINE_FAIL", "Proj.More")
    result = envelope(mine(mining))
    assert list(result["details"]["trace"]["failed"]) == ["Proj.More"]
    assert "unknown module Proj.More" in result["details"]["trace"]["failed"]["Proj.More"]
    assert result["notes"] == ["1 module(s) could not be traced"]
    # Basic alone still gives its targets; More's declarations are missing from the graph
    assert result["details"]["funnel"]["declarations traced"] == 6
    # the batch, then each module alone
    assert [c[-1] for c in lake_calls(mining)[1:]] == ["Proj.More", "Proj.Basic", "Proj.More"]
    monkeypatch.delenv("FAKE_MINE_FAIL")
    fixed = envelope(mine(mining, "--force"))
    assert lake_calls(mining)[-1][-1:] == ["Proj.More"]  # only the failed module again
    assert lake_calls(mining)[-2] == ["build"]
    assert fixed["details"]["funnel"] == FUNNEL and fixed["details"]["trace"]["failed"] == {}


def test_modules_lake_did_not_build_are_reported_not_imported(mining: Path) -> None:
    olean = mining / ".lake" / "build" / "lib" / "lean" / "Proj" / "Basic.olean"
    olean.parent.mkdir(parents=True)
    olean.write_bytes(b"")  # Proj/More.lean is in no default target: lake built no .olean
    result = envelope(mine(mining))
    assert "no .olean after lake build" in result["details"]["trace"]["failed"]["Proj.More"]
    assert [c[-1] for c in lake_calls(mining)] == ["build", "Proj.Basic"]


def test_nl_descriptions_in_t2s_informalization_format(mining: Path) -> None:
    model = script("mine-nl", lambda messages: "Thinking.\n```plaintext\nTwice a number.\n```")
    result = envelope(mine(mining, "--nl-model", model))
    assert result["details"]["nl"] == {
        "model": "scripted/mine-nl",
        "described": 3,
        "reused": 0,
        "failures": {},
    }
    nl = json.loads((mining.parent / "out" / "records.nl.json").read_text())
    assert nl == [
        {"id": "Proj/Basic.lean/double", "target_natural_language": ["Twice a number."]},
        {"id": "Proj/Basic.lean/double_eq", "target_natural_language": ["Twice a number."]},
        {"id": "Proj/Basic.lean/double_twice", "target_natural_language": ["Twice a number."]},
    ]
    assert load_nl_file(mining.parent / "out" / "records.nl.json") == {  # what run t2 --nl reads
        "Proj/Basic.lean/double": "Twice a number.",
        "Proj/Basic.lean/double_eq": "Twice a number.",
        "Proj/Basic.lean/double_twice": "Twice a number.",
    }
    prompts = [m[-1].text for m in REQUESTS["mine-nl"]]
    asked = next(p for p in prompts if "around the theorem `double_eq`" in p)
    assert "import Mathlib.Tactic" in asked and "theorem double_add" in asked
    assert "`double_eq`" in asked and "```plaintext" in asked
    envelope(mine(mining, "--force"))  # records again, without a model: no stale NL file
    assert not (mining.parent / "out" / "records.nl.json").exists()


def test_descriptions_are_journaled_and_a_rerun_asks_only_for_the_missing(
    mining: Path,
) -> None:
    def flaky(messages: Any) -> str:
        if "around the theorem `double_eq`" in messages[-1].text:
            raise RuntimeError("provider down")
        return "```plaintext\nTwice.\n```"

    first = envelope(mine(mining, "--nl-model", script("mine-flaky", flaky)))
    assert list(first["details"]["nl"]["failures"]) == ["Proj/Basic.lean/double_eq"]
    assert "provider down" in first["details"]["nl"]["failures"]["Proj/Basic.lean/double_eq"]
    assert first["notes"] == ["1 target(s) got no description from scripted/mine-flaky"]
    out = mining.parent / "out"
    assert [r["id"] for r in json.loads((out / "records.nl.json").read_text())] == [
        "Proj/Basic.lean/double",
        "Proj/Basic.lean/double_twice",
    ]
    assert (out / "records.nl.partial.jsonl").is_file()
    healed = script("mine-flaky", lambda messages: "```plaintext\nTwice.\n```")
    again = envelope(mine(mining, "--force", "--nl-model", healed))
    assert again["details"]["nl"]["reused"] == 2 and again["details"]["nl"]["failures"] == {}
    assert len(REQUESTS["mine-flaky"]) == 1  # only double_eq was asked again
    assert len(json.loads((out / "records.nl.json").read_text())) == 3
    assert not (out / "records.nl.partial.jsonl").exists()  # complete: no journal left


def test_a_custom_nl_prompt_is_checked(mining: Path) -> None:
    bad = mining.parent / "prompt.txt"
    bad.write_text("Describe {name} from {file}.\n")
    result = mine(mining, "--nl-model", script("mine-nl2", lambda m: "x"), "--nl-prompt", str(bad))
    assert result.exit_code == 2
    assert "unknown placeholder(s) file" in json.loads(result.stdout)["error"]
    assert lake_calls(mining) == []  # refused before tracing


def test_a_missing_lake_is_one_clear_error_before_any_work(
    mining: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(mining.parent / "nothing-here"))
    result = mine(mining)
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert error.startswith("lake not found") and "elan" in error and "\n" not in error
    assert not (mining.parent / "out").exists()


def test_bad_project_and_existing_out_are_refused(mining: Path, tmp_path: Path) -> None:
    missing = runner.invoke(app, ["t2", "mine", str(tmp_path / "nope"), "--out", "x.jsonl"])
    assert missing.exit_code == 2 and "not a directory" in missing.output
    plain = tmp_path / "plain"
    plain.mkdir()
    not_lake = runner.invoke(app, ["t2", "mine", str(plain), "--out", str(tmp_path / "x.jsonl")])
    assert not_lake.exit_code == 2 and "not a Lake project" in not_lake.output
    envelope(mine(mining))
    again = mine(mining)
    assert again.exit_code == 2
    error = json.loads(again.stdout)["error"]
    assert "records.jsonl, " in error and "already exist; pass --force" in error


def test_a_failing_build_is_reported_and_what_was_built_is_traced(
    mining: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One broken module fails the whole ``lake build``; the modules it built are still
    traced, the ones it left without an ``.olean`` are listed as not built."""
    monkeypatch.setenv("FAKE_MINE_BUILD_FAIL", "1")
    olean = mining / ".lake" / "build" / "lib" / "lean" / "Proj" / "Basic.olean"
    olean.parent.mkdir(parents=True)
    olean.write_bytes(b"")  # Proj/More.lean is the broken one: no .olean
    result = envelope(mine(mining))
    trace = result["details"]["trace"]
    assert "lake build failed (exit 1)" in trace["build_error"]
    assert "unknown identifier 'oops'" in trace["build_error"]
    assert list(trace["failed"]) == ["Proj.More"] and trace["modules"] == 1
    assert any("lake build failed (exit 1)" in note for note in result["notes"])


def test_tracing_runs_sandboxed_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require_lean_sandbox()
    project = make_project(tmp_path)
    monkeypatch.setenv("PATH", f"{fake_lake_bin(tmp_path)}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("GAPSCOPE_LEAN_SANDBOX", raising=False)
    result = envelope(mine(project))  # the fake finds trace.json above the project
    assert result["details"]["funnel"] == FUNNEL


def test_batches_run_as_ray_tasks(tmp_path: Path, ray_session: Any) -> None:
    project = make_project(tmp_path)
    config = TraceConfig(project, lake=(sys.executable, str(FAKE_LAKE)), sandboxed=False)
    config = TraceConfig(**{**config.__dict__, "batch_size": 1})
    trace = trace_project(config, tmp_path / "trace-cache.json", run_ray(None))
    assert trace.traced_now == 2 and trace.failed == {}
    assert sorted(trace.modules) == sorted(project_modules(project))
    assert len(trace.declarations) == 9


def test_ray_batches_still_queued_are_cancelled_when_the_run_stops(
    tmp_path: Path, ray_session: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_project(tmp_path)
    config = TraceConfig(project, lake=(sys.executable, str(FAKE_LAKE)), sandboxed=False)
    cancelled: list[Any] = []
    monkeypatch.setattr(ray_session, "cancel", lambda ref, force=False: cancelled.append(ref))
    batches = run_ray(None)(
        config, [["Proj.Basic"], ["Proj.More"]], sorted(project_modules(project))
    )
    next(batches)
    batches.close()  # the consumer stops (an error downstream, Ctrl-C)
    assert len(cancelled) == 1


@pytest.mark.lean
def test_mining_a_real_lean_project(tmp_path: Path) -> None:
    project = _real_project(
        tmp_path,
        "def double (n : Nat) : Nat := n + n\n\n"
        "theorem double_eq (n : Nat) : double n = n + n := rfl\n\n"
        "theorem double_zero : double 0 = 0 := by rw [double_eq]\n\n"
        "theorem double_zero' : double 0 + 0 = 0 := by rw [double_zero]\n",
    )
    out = tmp_path / "records.jsonl"
    command = ["t2", "mine", str(project), "--out", str(out), "--json", "--tracer", "gapscope"]
    details = envelope(runner.invoke(app, [*command, "--allow-unsandboxed"]))["details"]
    assert details["trace"]["failed"] == {}
    # double -> double_eq -> double_zero -> double_zero' (each used by the next, by Lean)
    assert [(t["id"], t["successors"], t["depth"], t["prop"]) for t in details["targets"]] == [
        ("Real/Basic.lean/double", 3, 3, False),
        ("Real/Basic.lean/double_eq", 2, 2, True),
    ]
    loaded = load_records(out)
    assert audit_records(loaded.records, loaded.problems).findings == []


class _Ident:
    """LeanDojo's IdentNode, as far as the adapter reads it."""

    def __init__(self, full_name: str, line: int | None, column: int = 1) -> None:
        self.full_name = full_name
        at = None if line is None else [line, column]  # None: synthetic syntax, no position
        self._span = (at, None if at is None else [line, column + len(full_name)])

    def get_closure(self) -> Any:
        return self._span


class _TracedFile:
    def __init__(self, path: str, definitions: list[dict[str, Any]], idents: list[_Ident]):
        self.path = Path(path)
        self._definitions, self._idents = definitions, idents

    def get_premise_definitions(self) -> list[dict[str, Any]]:
        return self._definitions

    def traverse_preorder(self, callback: Any, node_cls: type) -> None:
        for node in self._idents:
            if isinstance(node, node_cls):
                callback(node, [])


def _fake_leandojo(calls: list[Any]) -> Any:
    """A lean_dojo module whose trace() returns the fake project as LeanDojo would see it:
    positions with 1-based columns, one identifier node per use, and a dependency's file."""
    import types

    files: dict[str, _TracedFile] = {}
    for entry, (name, (module, _k, _p, source, uses)) in zip(
        trace_entries(),
        DECLARATIONS.items(),
        strict=True,
    ):
        start, end = entry["range"]["start"], entry["range"]["end"]
        path = module.replace(".", "/") + ".lean"
        traced = files.setdefault(path, _TracedFile(path, [], []))
        traced._definitions.append(
            {"full_name": name, "code": source, "kind": "commanddeclaration"}
            | {
                "start": [start["line"], start["column"] + 1],
                "end": [end["line"], end["column"] + 1],
            }
        )
        traced._idents += [_Ident(u, start["line"], start["column"] + 2) for u in uses]
        traced._idents.append(_Ident("lonely", None))  # no position: not a use of anything
    dependency = _TracedFile(
        ".lake/packages/batteries/Batteries/Nat.lean",
        [{"full_name": "Nat.sum", "code": "def Nat.sum := 0", "start": [1, 1], "end": [1, 17]}],
        [],
    )

    def trace(repo: Any, build_deps: bool = True) -> Any:
        calls.append((repo.url, repo.commit, build_deps))
        return types.SimpleNamespace(traced_files=[*files.values(), dependency])

    class LeanGitRepo:
        def __init__(self, url: str, commit: str) -> None:
            self.url, self.commit = url, commit

    root = types.ModuleType("lean_dojo")
    root.trace = trace  # type: ignore[attr-defined]
    root.LeanGitRepo = LeanGitRepo  # type: ignore[attr-defined]
    root.__version__ = "0-fake"  # type: ignore[attr-defined]
    ast = types.ModuleType("lean_dojo.data_extraction.ast")
    ast.IdentNode = _Ident  # type: ignore[attr-defined]
    return root, ast


def test_leandojo_is_the_tracer_where_it_is_installed(
    mining: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess
    import types

    calls: list[Any] = []
    root, ast = _fake_leandojo(calls)
    monkeypatch.setitem(sys.modules, "lean_dojo", root)
    monkeypatch.setitem(sys.modules, "lean_dojo.data_extraction", types.ModuleType("x"))
    monkeypatch.setitem(sys.modules, "lean_dojo.data_extraction.ast", ast)
    plain = mine(mining, tracer="auto")
    assert plain.exit_code == 2 and "has none" in json.loads(plain.stdout)["error"]  # no git
    git = ["git", "-C", str(mining), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "init"], check=True)
    basic = mining / "Proj" / "Basic.lean"
    basic.write_text(basic.read_text() + "-- an edit LeanDojo would not see\n")
    dirty = mine(mining, tracer="auto")
    assert dirty.exit_code == 2 and "differ from it (Proj/Basic.lean)" in dirty.stdout
    subprocess.run([*git, "checkout", "-q", "--", "Proj/Basic.lean"], check=True)
    result = envelope(mine(mining, tracer="auto"))
    details = result["details"]
    assert details["trace"]["tracer"] == "leandojo" and "traced by LeanDojo" in result["notes"][0]
    assert calls and calls[0][0] == str(mining) and calls[0][2] is False  # not all deps
    assert details["funnel"] == FUNNEL | {"declarations traced": 10}  # + the dependency's
    assert [(t["id"], t["prop"]) for t in details["targets"]] == [
        ("Proj/Basic.lean/double", False),
        ("Proj/Basic.lean/double_eq", True),
        ("Proj/Basic.lean/double_twice", True),
    ]
    assert lake_calls(mining) == []  # LeanDojo builds and traces by itself
    envelope(mine(mining, "--force", tracer="leandojo"))
    assert len(calls) == 1  # the second run read the cache


def test_the_funnel_is_printed_as_a_table(mining: Path) -> None:
    out = mining.parent / "out" / "records.jsonl"
    command = ["t2", "mine", str(mining), "--out", str(out), "--tracer", "gapscope"]
    result = runner.invoke(app, command)
    assert result.exit_code == 0, result.output
    lines = [" ".join(line.replace("│", " ").split()) for line in result.stdout.splitlines()]
    assert "eligible kinds 8" in lines and "written 3" in lines
    assert "Hard (Prop-typed, from Lean) targets: 2 of 3" in lines
    assert f"records: {out}" in lines


def test_leandojo_is_not_run_where_the_sandbox_is_in_force(
    mining: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """LeanDojo runs lake and Lean itself, outside bubblewrap: asked for by name it needs
    --allow-unsandboxed; ``auto`` falls back to gapscope's (sandboxed) tracer."""
    import types

    from gapscope.app.t2_mine import _trace
    from gapscope.t2.mining.output import OutputPaths

    calls: list[Any] = []
    root, ast = _fake_leandojo(calls)
    monkeypatch.setitem(sys.modules, "lean_dojo", root)
    monkeypatch.setitem(sys.modules, "lean_dojo.data_extraction", types.ModuleType("x"))
    monkeypatch.setitem(sys.modules, "lean_dojo.data_extraction.ast", ast)
    config = TraceConfig(mining, sandboxed=True)
    paths = OutputPaths.of(mining.parent / "out" / "records.jsonl")
    with pytest.raises(ValueError, match="outside gapscope's sandbox; pass --allow-unsandboxed"):
        _trace(config, paths, "leandojo", "local", None, allow_unsandboxed=False)
    assert calls == []


def test_a_tracer_that_does_not_compile_stops_at_once(
    mining: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a Lean the metaprogram does not compile with, every module would fail alike: the
    command stops after the batches in flight and says why, instead of retrying each module."""
    monkeypatch.setenv("FAKE_MINE_TRACER_BROKEN", "1")
    result = mine(mining)  # one batch of both modules
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert "gapscope's tracer does not compile with this project's Lean" in error
    assert "invalid argument name 'loadExts'" in error
    # once: not again for each of the two modules alone
    assert [c[:3] for c in lake_calls(mining)].count(["env", "lean", "--run"]) == 1


def test_a_warning_in_the_tracers_source_is_not_a_compile_error(
    mining: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A newer Lean's deprecation warning names GapscopeMine.lean; a batch that then fails
    for a module of its own (Lean dies importing it, no report written) is retried module by
    module, not read as "the tracer does not compile" (which stopped the whole run)."""
    monkeypatch.setenv("FAKE_MINE_WARN", "1")
    monkeypatch.setenv("FAKE_MINE_CRASH", "Proj.More")
    result = envelope(mine(mining))
    assert list(result["details"]["trace"]["failed"]) == ["Proj.More"]
    assert "INTERNAL PANIC" in result["details"]["trace"]["failed"]["Proj.More"]
    assert result["details"]["funnel"]["declarations traced"] == 6  # Proj.Basic's


def test_a_module_lean_writes_with_guillemets_keeps_its_declarations(
    mining: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Proj/More Things.lean`` is module ``Proj.More Things``; Lean's ``Name.toString``
    writes it ``Proj.«More Things»``: the trace must still file its declarations under it."""
    (mining / "Proj" / "More.lean").rename(mining / "Proj" / "More Things.lean")
    trace = mining.parent / "trace.json"
    entries = json.loads(trace.read_text())
    for entry in entries:
        entry["module"] = entry["module"].replace("Proj.More", "Proj.More Things")
    trace.write_text(json.dumps(entries))
    monkeypatch.setenv("FAKE_MINE_ESCAPE", "1")
    result = envelope(mine(mining))
    assert result["details"]["funnel"] == FUNNEL
    cache = json.loads((mining.parent / "out" / "records.trace.json").read_text())
    assert sorted(cache["modules"]) == ["Proj.Basic", "Proj.More Things"]
    assert len(cache["modules"]["Proj.More Things"]) == 3


def test_a_symlink_leaving_the_project_is_refused_before_lean_runs(mining: Path) -> None:
    secret = mining.parent / "secret.txt"
    secret.write_text("root:x:0:0\n")
    (mining / "Proj" / "Shadow.lean").symlink_to(secret)
    result = mine(mining)
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert "Shadow.lean is a link to" in error and "outside the project" in error
    assert lake_calls(mining) == []  # not built, not hashed into a trace, not traced
    with pytest.raises(OutsideProject):
        project_modules(mining)


def test_a_linked_folder_leaving_the_project_is_refused_naming_it(mining: Path) -> None:
    """A walk does not enter a linked folder, lake does: such a project is refused, not
    trimmed; a link to a folder inside the project is kept."""
    vendor = mining.parent / "vendor"
    vendor.mkdir()
    (vendor / "Extra.lean").write_text("theorem extra : True := trivial\n")
    (mining / "Proj" / "Inside").symlink_to(mining / "Proj")
    assert "Proj.Basic" in project_modules(mining)
    (mining / "Proj" / "Vendor").symlink_to(vendor)
    result = mine(mining)
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert f"{mining / 'Proj' / 'Vendor'} is a link to {vendor.resolve()}" in error
    assert "outside the project: remove it or copy the folder in" in error
    assert lake_calls(mining) == []
    with pytest.raises(OutsideProject, match="Vendor is a link"):
        project_modules(mining)


def test_a_definition_keeps_the_kind_its_source_writes() -> None:
    """To Lean's environment ``@[reducible] def`` and ``abbrev`` are one thing; the record
    names the keyword the source wrote."""
    text = "@[reducible] def double (n : Nat) : Nat := n + n\n\nabbrev twice := double\n"
    traced = {
        "name": "double",
        "module": "P.A",
        "kind": "abbrev",  # what the tracer said of a reducible def
        "is_prop": False,
        "range": {"start": {"line": 1, "column": 0}, "end": {"line": 1, "column": 48}},
        "uses": [],
    }
    declaration = parse_declaration(traced, "test")
    span = cut(text, declaration)
    assert isinstance(span, tuple)
    assert make_record(declaration, "P/A.lean", text, span, "P").target_code_name == "def double"
    abbrev = parse_declaration(
        traced
        | {"name": "twice", "kind": "def"}
        | {"range": {"start": {"line": 3, "column": 0}, "end": {"line": 3, "column": 22}}},
        "test",
    )
    span = cut(text, abbrev)
    assert isinstance(span, tuple)
    assert make_record(abbrev, "P/A.lean", text, span, "P").target_code_name == "abbrev twice"


@pytest.mark.lean
def test_a_shared_matcher_and_a_reducible_def_as_lean_traces_them(tmp_path: Path) -> None:
    """Lean reuses ``foo.match_1`` for ``bar``'s identical ``match``: ``bar`` does not use
    ``foo``. ``@[reducible] def`` is traced as a ``def``."""
    project = _real_project(
        tmp_path,
        "def foo (n : Nat) : Nat := match n with\n  | 0 => 1\n  | _ + 1 => 2\n\n"
        "def bar (n : Nat) : Nat := match n with\n  | 0 => 1\n  | _ + 1 => 2\n\n"
        "@[reducible] def r (n : Nat) : Nat := foo n\n",
    )
    config = TraceConfig(project, sandboxed=False)
    trace = trace_project(config, tmp_path / "trace.json")
    assert trace.failed == {}
    found = {d.name: d for d in trace.declarations}
    assert found["bar"].uses == ()
    assert (found["r"].kind, found["r"].uses) == ("def", ("foo",))


def _real_project(tmp_path: Path, basic: str) -> Path:
    """A one-module Lake project ``Real`` whose ``Real/Basic.lean`` is ``basic``; skips the
    test where Lean is not installed."""
    if shutil.which("lake") is None:
        pytest.skip("lake is not installed (install Lean 4 with elan to run this test)")
    project = tmp_path / "Real"
    (project / "Real").mkdir(parents=True)
    (project / "lakefile.toml").write_text(
        'name = "Real"\ndefaultTargets = ["Real"]\n\n[[lean_lib]]\nname = "Real"\n'
    )
    (project / "Real" / "Basic.lean").write_text(basic)
    (project / "Real.lean").write_text("import Real.Basic\n")
    return project
