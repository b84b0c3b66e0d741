"""The tracer's known answer: ``GapscopeMine.lean`` run on a project whose graph is known.

The self-test compiles the tracer, but a tracer that compiles may still write nothing: in a
Lean whose declaration ranges are not where ``findDeclarationRangesCore?`` looks (module-era
Lean keeps them as server-level data), every constant fails ``written`` and the trace is empty,
or a change in how Lean names generated constants moves ``uses``. So the self-test also runs
the tracer the way ``gapscope t2 mine`` does (:func:`~gapscope.t2.mining.trace.trace_project`:
``lake build``, then ``lake env lean --run GapscopeMine.lean``, sandboxed and bounded as a
check's ``lake`` call is) on a Lake project made of the shipped ``GapscopeProbe.lean``, with
the workspace's toolchain, and compares each declaration's kind, first line and uses with
:data:`EXPECTED`. An empty trace, a missing, extra or different declaration fails the
self-test, naming it.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from gapscope.lean import Bounds, LeanUnavailable, Probe, ProgramRun
from gapscope.t2.mining.trace import TraceConfig, trace_project
from gapscope.t2.mining.traced import TracedDeclaration, TraceError

MODULE = "GapscopeProbe"
LAKEFILE = (
    f'name = "gapscope_probe"\ndefaultTargets = ["{MODULE}"]\n\n[[lean_lib]]\nname = "{MODULE}"\n'
)
"""The probe project's ``lakefile.toml``: one library of one module, no dependency (so
``lake build`` needs no network, as in the sandbox)."""


@dataclass(frozen=True)
class Known:
    """What the tracer must write for one declaration of ``GapscopeProbe.lean``."""

    kind: str
    line: int
    uses: frozenset[str] = frozenset()


def _n(*names: str) -> frozenset[str]:
    return frozenset(f"{MODULE}.{name}" for name in names)


EXPECTED = {
    f"{MODULE}.double": Known("def", 14),
    f"{MODULE}.double_zero": Known("theorem", 16, _n("double")),
    f"{MODULE}.quadruple": Known("def", 18, _n("double")),
    f"{MODULE}.quadruple_zero": Known("theorem", 20, _n("quadruple")),
    f"{MODULE}.quadruple_zero_double": Known(
        "theorem", 22, _n("quadruple", "double", "quadruple_zero", "double_zero")
    ),
    f"{MODULE}.unrelated": Known("theorem", 25),
}
"""Per declaration of ``GapscopeProbe.lean``: its kind, the line its range starts on and the
project declarations its type and value mention (the tracer's header says what ``uses`` is)."""


def probe_source() -> Path:
    return Path(str(resources.files("gapscope.t2.mining") / f"{MODULE}.lean"))


def graph_differences(declarations: Sequence[TracedDeclaration]) -> list[str]:
    """How the tracer's declarations differ from :data:`EXPECTED` (empty: they match)."""
    if not declarations:
        return ["the tracer wrote no declaration (are declaration ranges readable in this Lean?)"]
    found = {d.name: d for d in declarations}
    out = [f"{name}: missing" for name in EXPECTED if name not in found]
    out += [f"{name}: not in {MODULE}.lean's graph" for name in sorted(set(found) - set(EXPECTED))]
    for name, known in EXPECTED.items():
        got = found.get(name)
        if got is None:
            continue
        if got.kind != known.kind:
            out.append(f"{name}: kind {got.kind}, expected {known.kind}")
        if got.start[0] != known.line:
            out.append(f"{name}: starts on line {got.start[0]}, expected {known.line}")
        if set(got.uses) != known.uses:
            out.append(f"{name}: uses {sorted(got.uses)}, expected {sorted(known.uses)}")
    return out


def run_probe(
    workspace: Path, sandboxed: bool, timeout_s: float, bounds: Bounds | None = None
) -> ProgramRun:
    """Build the probe project with ``workspace``'s toolchain, trace it, compare; every
    ``lake`` call held to ``bounds`` (the self-test passes a check's)."""
    with tempfile.TemporaryDirectory(prefix="gapscope-tracer-probe-") as scratch:
        Path(scratch).chmod(0o711)  # a sandbox started as another uid must reach the project
        project = Path(scratch) / "probe"
        project.mkdir()
        shutil.copyfile(probe_source(), project / f"{MODULE}.lean")
        (project / "lakefile.toml").write_text(LAKEFILE, encoding="utf-8")
        if (workspace / "lean-toolchain").is_file():
            shutil.copyfile(workspace / "lean-toolchain", project / "lean-toolchain")
        config = TraceConfig(
            project, sandboxed=sandboxed, build_timeout_s=timeout_s, batch_timeout_s=timeout_s,
            bounds=bounds,
        )  # fmt: skip
        try:
            trace = trace_project(config, Path(scratch) / "trace-cache.json")
        except (LeanUnavailable, TraceError, OSError) as exc:
            return ProgramRun(False, "lean_error", f"the tracer did not run: {exc}")
    if trace.failed:
        why = "; ".join(f"{module}: {reason}" for module, reason in trace.failed.items())
        return ProgramRun(False, "lean_error", f"{why} ({trace.build_error or 'built'})")
    differences = graph_differences(trace.declarations)
    if differences:
        return ProgramRun(False, "wrong_graph", "; ".join(differences))
    return ProgramRun(True, "traced", "")


TRACER_PROBE = Probe("t2/mining/GapscopeMine.lean", run_probe)
"""The probe ``gapscope lean selftest`` hands the self-test (named after the program it
tests, as the compile results are)."""
