"""The tracer's output: one declaration as Lean knows it, read from the JSON that
``GapscopeMine.lean`` (or the LeanDojo adapter) writes, every field checked."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class TraceError(ValueError):
    """A tracer's output is malformed (the message names the batch, entry and field)."""


@dataclass(frozen=True)
class TracedDeclaration:
    """One declaration as Lean knows it.

    ``name``: Lean's full name, unique (a private declaration's with its private prefix);
    ``source_name``: as the source writes it. ``start``/``end``: its declaration range,
    ``(line, column)``, lines 1-based, columns in codepoints 0-based, end exclusive (Lean's
    ``DeclarationRange``). ``uses``: the full names of the project declarations its type and
    value mention (never itself). ``is_prop``: its type is a proposition (``Meta.isProp``),
    T2's Hard tag.
    """

    name: str
    module: str
    kind: str
    is_prop: bool
    start: tuple[int, int]
    end: tuple[int, int]
    uses: tuple[str, ...]
    source_name: str = ""

    def __post_init__(self) -> None:
        if not self.source_name:
            object.__setattr__(self, "source_name", self.name)

    def to_dict(self) -> dict[str, Any]:
        """The metaprogram's entry for this declaration (what :func:`parse_declaration` reads)."""
        (line, column), (end_line, end_column) = self.start, self.end
        span = {
            "start": {"line": line, "column": column},
            "end": {"line": end_line, "column": end_column},
        }
        return {
            "name": self.name,
            "source_name": self.source_name,
            "module": self.module,
            "kind": self.kind,
            "is_prop": self.is_prop,
            "range": span,
            "uses": list(self.uses),
        }


def _position(value: object, where: str) -> tuple[int, int]:
    if not isinstance(value, dict):
        raise TraceError(f"{where}: expected an object with line and column, got {value!r:.80}")
    line, column = value.get("line"), value.get("column")
    if not isinstance(line, int) or not isinstance(column, int) or line < 1 or column < 0:
        raise TraceError(f"{where}: line must be an integer >= 1 and column >= 0, got {value!r}")
    return line, column


def parse_declaration(raw: object, where: str) -> TracedDeclaration:
    """One entry of the metaprogram's ``declarations`` (module docstring of the .lean file)."""
    if not isinstance(raw, dict):
        raise TraceError(f"{where}: expected an object, got {type(raw).__name__}")
    name = raw.get("name")
    where = f"{where} ({name})" if isinstance(name, str) else where
    for key in ("name", "module", "kind"):
        if not isinstance(raw.get(key), str) or not raw[key]:
            raise TraceError(f"{where}: {key} must be a non-empty string, got {raw.get(key)!r}")
    if not isinstance(raw.get("is_prop"), bool):
        raise TraceError(f"{where}: is_prop must be true or false, got {raw.get('is_prop')!r}")
    span = raw.get("range")
    if not isinstance(span, dict):
        raise TraceError(f"{where}: range must be an object with start and end")
    start = _position(span.get("start"), f"{where}: range.start")
    end = _position(span.get("end"), f"{where}: range.end")
    if end < start:
        raise TraceError(f"{where}: range ends at {end} before it starts at {start}")
    uses = raw.get("uses")
    if not isinstance(uses, list) or not all(isinstance(u, str) for u in uses):
        raise TraceError(f"{where}: uses must be a list of names")
    source = raw.get("source_name", raw["name"])
    if not isinstance(source, str) or not source:
        raise TraceError(f"{where}: source_name must be a non-empty string, got {source!r}")
    return TracedDeclaration(
        raw["name"], raw["module"], raw["kind"], raw["is_prop"], start, end, tuple(uses), source
    )


def parse_batch(payload: object, where: str) -> list[TracedDeclaration]:
    """The declarations of one tracer output; TraceError when it reports an error or is
    malformed."""
    if not isinstance(payload, dict):
        raise TraceError(f"{where}: expected a JSON object, got {type(payload).__name__}")
    if payload.get("error"):
        raise TraceError(f"{where}: the tracer failed: {payload['error']}")
    entries = payload.get("declarations")
    if not isinstance(entries, list):
        raise TraceError(f"{where}: declarations must be a list")
    return [parse_declaration(e, f"{where}: declarations[{i}]") for i, e in enumerate(entries)]
