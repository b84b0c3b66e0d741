"""The repository track's verdicts, graded from a build's exit code and the lines of its
output that decide them (:mod:`gapscope.t2.repo` runs the build).

- compile: ``lake env lean`` of the file cut after the generated declaration exits 0.
- TA (parity): ``lake build`` of the target's module and every module importing it exits 0.
- graded TA: the share of test units with no error line - each declaration after the target
  in its file that uses it, and each dependent module.
- TA (strict): TA and no ``sorry``/``admit`` in the generated text and no sorry warning on its
  lines. Axioms are not queried in this track (``lake build`` does not print them).

The lines are the error lines and ``sorry`` warnings of the build's whole output
(:func:`decisive`, kept as the output is read: :mod:`gapscope.lean.output`), never the tail
kept for the log, which a flood printed after an error pushes out. Where there were too many
to keep, nothing they could deny is granted: every unit of a failed build fails and TA
(strict) is false. A timeout fails every verdict.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gapscope.lean import Run
from gapscope.t2.declarations import split_declarations
from gapscope.t2.evaluate import SampleOutcome, SampleResult
from gapscope.t2.records import T2Record
from gapscope.t2.successors import successors_in, target_identity

_DIAGNOSTIC = re.compile(
    r"^(?:(?P<sev1>error|warning): )?(?:\./)?(?P<path>[^\s:][^:\n]*\.lean):(?P<line>\d+):\d+:"
    r"(?: (?P<sev2>error|warning):)?(?P<text>.*)$",
    re.MULTILINE,
)
_SORRY_WARNING = re.compile(r"declaration uses ['`]sorry['`]")
_SORRY = re.compile(r"(?<![\w'.])(?:sorry|admit)(?![\w'!?])")


@dataclass(frozen=True)
class Diagnostic:
    path: str
    line: int
    severity: str
    text: str


def decisive(line: str) -> bool:
    """Whether a line of ``lake build``'s output counts in a verdict: an error, or the
    warning that a declaration uses ``sorry`` (the words first: most lines have neither)."""
    if "error" not in line and "sorry" not in line:
        return False
    return any(
        d.severity == "error" or _SORRY_WARNING.search(d.text) for d in parse_diagnostics(line)
    )


def parse_diagnostics(output: str) -> list[Diagnostic]:
    """``path:line:col: error: ...`` (and lake's ``error: path:line:col: ...``) lines."""
    out: list[Diagnostic] = []
    for m in _DIAGNOSTIC.finditer(output):
        severity = m["sev1"] or m["sev2"]
        if severity:
            out.append(Diagnostic(m["path"], int(m["line"]), severity, m["text"].strip()))
    return out


def verdicts(
    record: T2Record,
    relative: str,
    code: str,
    prefix: str,
    suffix: str,
    modules: tuple[str, ...],
    compile_rc: int | None,
    built: Run,
    bounds: str,
) -> SampleResult:
    """The verdicts of a build no limit stopped (module docstring): ``relative`` is the
    record's file in the project, ``modules`` its module and the dependents built;
    ``bounds``: what held the ``lake`` calls."""
    build_rc, tests = built.code, modules[1:]
    first = prefix.count("\n") + 1
    generated = range(first, first + code.count("\n") + 1)
    shift = first + code.count("\n")  # the suffix starts on the generated code's last line
    in_file = successors_in(split_declarations(suffix), target_identity(record))
    complete = built.kept is not None
    diagnostics = parse_diagnostics("\n".join(built.kept or ()))
    errors = [d for d in diagnostics if d.severity == "error"]

    def broken_declaration(start: int, end: int) -> bool:
        return any(
            d.path.endswith(relative) and shift + start <= d.line < shift + end for d in errors
        )

    units = [(d.name or "?", broken_declaration(d.start_line, d.end_line)) for d in in_file]
    units += [
        (m, any(d.path.endswith(m.replace(".", "/") + ".lean") for d in errors)) for m in tests
    ]
    if build_rc is None or (build_rc != 0 and not complete):
        units = [(name, True) for name, _ in units]
    sorry_here = bool(_SORRY.search(code)) or any(
        d.path.endswith(relative) and d.line in generated and _SORRY_WARNING.search(d.text)
        for d in diagnostics
    )
    ta = build_rc == 0
    passed = sum(not bad for _, bad in units)
    return SampleResult(
        SampleOutcome.CHECKED,
        compiles=compile_rc == 0,
        ta=ta,
        ta_strict=ta and complete and not sorry_here,
        graded=passed / len(units) if units else None,
        successors=len(units),
        successors_passed=passed,
        failing_successors=tuple(name for name, bad in units if bad),
        compile_status="timeout" if compile_rc is None else f"exit {compile_rc}",
        full_status="timeout" if build_rc is None else f"exit {build_rc}",
        errors={
            "build_errors": len(errors) if complete else None,
            "modules_built": list(modules),
        },
        selftest=False,  # no known-answer case has gone through lake build: gapscope.t2.untested
        bounds=bounds,
    )
