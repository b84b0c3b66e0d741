"""The two Lean programs per sample, and which part of them each Lean message belongs to.

As in T2's released evaluator: *compile* = header + code before + the generated declaration;
*full* = the whole file with the generated declaration in the target's place. The file is
rebuilt from the record's parts (not by ``str.replace`` on ``formal_language``, which would
replace every occurrence of the target), with a blank line between parts so that no
declaration runs into the next. Lines are 1-based and relative to the program body (the
header goes to the backend separately), as the REPL reports them.
"""

from __future__ import annotations

from dataclasses import dataclass

from gapscope.lean import CheckRequest, LeanMessage
from gapscope.t2.records import T2Record
from gapscope.t2.successors import Successor, later_declarations, successors_in, target_identity


@dataclass(frozen=True)
class Span:
    """Lines ``[start, end)`` (1-based) of one part of a program body."""

    start: int
    end: int

    def __contains__(self, line: int) -> bool:
        return self.start <= line < self.end


@dataclass(frozen=True)
class Programs:
    """The compile and full requests, and where the parts sit in them.

    The generated declaration sits at the same lines in both programs. ``unrelated``: the
    later declarations that do not use the target (not tests; an error there fails TA, as in
    T2, but no successor).
    """

    compile: CheckRequest
    full: CheckRequest
    before: Span
    generated: Span
    successors: tuple[Successor, ...]
    successor_spans: tuple[Span, ...]
    unrelated: tuple[Span, ...] = ()


def _join(parts: list[str]) -> tuple[str, list[Span]]:
    """Parts joined by one blank line; the span of each part."""
    spans: list[Span] = []
    line = 1
    for part in parts:
        height = part.count("\n") + 1 if part else 0
        spans.append(Span(line, line + height))
        line += height + 1 if part else 0
    return "\n\n".join(p for p in parts if p), spans


def build_programs(record: T2Record, generated: str, timeout_s: float) -> Programs:
    """The programs that test ``generated`` in place of ``record``'s target."""
    before = record.before_target_code.strip("\n")
    after = record.after_target_code.strip("\n")
    lead = len(record.after_target_code) - len(record.after_target_code.lstrip("\n"))
    code = generated.strip("\n")
    compile_body, _ = _join([before, code])
    full_body, spans = _join([before, code, after])
    later = later_declarations(record)
    found = tuple(successors_in(later, target_identity(record)))
    tested = {s.start_line for s in found}
    offset = spans[2].start - lead
    return Programs(
        compile=CheckRequest(compile_body, record.header, timeout_s),
        full=CheckRequest(full_body, record.header, timeout_s),
        before=spans[0],
        generated=spans[1],
        successors=found,
        successor_spans=tuple(Span(offset + s.start_line, offset + s.end_line) for s in found),
        unrelated=tuple(
            Span(offset + d.start_line, offset + d.end_line)
            for d in later
            if d.start_line not in tested
        ),
    )


@dataclass(frozen=True)
class Attribution:
    """Error-severity messages of the full program, by the part they sit in."""

    before: int
    generated: int
    successors: tuple[int, ...]
    unplaced: int
    unrelated: int = 0

    @property
    def total(self) -> int:
        return self.before + self.generated + sum(self.successors) + self.unplaced + self.unrelated


def attribute(messages: tuple[LeanMessage, ...], programs: Programs) -> Attribution:
    """Count the errors of each part; an error with no line, or outside every part
    (between parts, in a command such as ``open``), is ``unplaced``."""
    before = generated = unplaced = unrelated = 0
    per_successor = [0] * len(programs.successors)
    for message in messages:
        if message.severity != "error":
            continue
        line = message.line
        if line is None:
            unplaced += 1
        elif line in programs.before:
            before += 1
        elif line in programs.generated:
            generated += 1
        else:
            hit = next((i for i, s in enumerate(programs.successor_spans) if line in s), None)
            if hit is not None:
                per_successor[hit] += 1
            elif any(line in span for span in programs.unrelated):
                unrelated += 1
            else:
                unplaced += 1
    return Attribution(before, generated, tuple(per_successor), unplaced, unrelated)
