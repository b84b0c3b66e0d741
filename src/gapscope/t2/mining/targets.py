"""From a traced project to T2 records: the paper's filters, the exact source cut, the funnel.

The paper keeps a declaration as a target when it is non-trivial ("distance to successors >
1", which excludes isolated theorems) and has at least two successors (|T_succ| >= 2). Here
the successors are its transitive dependents (``gapscope.t2.mining.graph``) and non-trivial
reads as depth >= ``min_depth`` (2): some dependent of the target is itself used, so its tests
reach beyond its direct users. T2's released code has no successor-distance check; it instead
keeps targets whose dependency tree (what the target uses) is at least 2 deep
(``src/preprocessing/research_papers/filtering.py``, see docs/t2.md).

Targets are theorem-, def- and abbrev-like declarations whose text can be cut out of their file
exactly at Lean's declaration range: the cut must start with a declaration of that name and
occur once in the file, so that the repository track can find and replace it. Each record is
T2's existing-track layout on the real file: ``header`` (the file up to and including its last
``import`` line) + ``before_target_code`` + ``target_code`` + ``after_target_code`` is the
file, ``formal_language``. Records that ``gapscope t2 audit --repo PROJECT`` would reject are
dropped and counted, so every record written passes it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from gapscope.lean import code_only
from gapscope.t2.audit import SuccessorsOf, audit_records
from gapscope.t2.declarations import DEFINITION_LIKE_KINDS, head
from gapscope.t2.extract import unquoted_name
from gapscope.t2.mining.graph import DependencyGraph
from gapscope.t2.mining.traced import TracedDeclaration
from gapscope.t2.records import T2Record
from gapscope.t2.repo import target_file
from gapscope.t2.successors import record_successors

TARGET_KINDS = frozenset({"theorem", "def", "abbrev"})
"""Lean kinds a target may have (Mathlib's ``lemma`` is a theorem to Lean)."""
_HEADER_COMMAND = re.compile(r"(?:import|prelude|module|(?:public\s+)?(?:meta\s+)?import)\b")
"""The commands of a file's header (the module system adds ``public``/``meta`` imports)."""


@dataclass(frozen=True)
class Filters:
    """The paper's target filters (its values are the defaults)."""

    min_successors: int = 2
    min_depth: int = 2

    def __post_init__(self) -> None:
        if self.min_successors < 0 or self.min_depth < 0:
            raise ValueError(
                f"min_successors and min_depth must be >= 0, got {self.min_successors}, "
                f"{self.min_depth}"
            )


@dataclass(frozen=True)
class MinedTarget:
    """A record and what Lean says of its target: the Hard tag, successors and depth."""

    record: T2Record
    is_prop: bool
    successors: int
    depth: int
    module: str


@dataclass
class Mined:
    """The records kept, the count after each stage, and why each dropped target went."""

    targets: list[MinedTarget]
    funnel: dict[str, int]
    dropped: list[dict[str, str]] = field(default_factory=list)


def header_end(text: str) -> int:
    """Where a file's import header ends: after its last ``import`` line (0 when none).

    Comments and blank lines before and between imports belong to the header; the first
    other command ends it (Lean accepts imports only there)."""
    end = 0
    at = 0
    for raw, code in zip(text.split("\n"), code_only(text).split("\n"), strict=True):
        line_end = at + len(raw) + 1
        stripped = code.strip()
        if _HEADER_COMMAND.match(stripped):
            end = min(line_end, len(text))
        elif stripped:
            break
        at = line_end
    return end


def offset(text: str, line: int, column: int) -> int | None:
    """The index of Lean's ``(line, column)`` (1-based line, codepoint column) in ``text``,
    None when the file has no such position."""
    lines = text.split("\n")
    if not 1 <= line <= len(lines) or column > len(lines[line - 1]):
        return None
    return sum(len(s) + 1 for s in lines[: line - 1]) + column


def cut(text: str, declaration: TracedDeclaration) -> tuple[int, int] | str:
    """``(start, end)`` of the declaration's text in its file, or why it cannot be cut out."""
    start = offset(text, *declaration.start)
    end = offset(text, *declaration.end)
    if start is None or end is None or end <= start:
        return f"range {declaration.start}-{declaration.end} is not in the file"
    found = head(text[start:end])
    if found is None or found[1] is None:
        return "the text at its range does not start with a named declaration"
    written = unquoted_name(found[1]).removeprefix("_root_.")
    name = unquoted_name(declaration.source_name)
    if not (name == written or name.endswith("." + written)):
        return f"the text at its range declares {found[1]}, not {declaration.source_name}"
    if text.count(text[start:end]) != 1:
        return "its text occurs more than once in the file"
    return start, end


def written_kind(traced: str, code: str) -> str:
    """The kind as the source writes it: ``def`` or ``abbrev`` from the keyword (to Lean's
    environment an ``abbrev`` and a ``@[reducible] def`` are the same constant), else the
    tracer's kind (Lean's ``theorem`` for Mathlib's ``lemma``, as T2's records name it)."""
    found = head(code)
    if traced in DEFINITION_LIKE_KINDS and found and found[0] in DEFINITION_LIKE_KINDS:
        return found[0]
    return traced


def make_record(
    declaration: TracedDeclaration, path: str, text: str, span: tuple[int, int], dataset: str
) -> T2Record:
    """The T2 record of a target cut out of ``text`` (the file at ``path``) at ``span``."""
    start, end = span
    split = min(header_end(text), start)
    kind = written_kind(declaration.kind, text[start:end])
    return T2Record(
        id=f"{path}/{declaration.source_name}",
        target_code=text[start:end],
        formal_language=text,
        natural_language="",
        target_code_name=f"{kind} {declaration.source_name}",
        before_target_code=text[split:start],
        after_target_code=text[end:],
        header=text[:split],
        dataset_name=dataset,
    )


def mine_targets(
    declarations: Sequence[TracedDeclaration],
    paths: dict[str, str],
    read: Callable[[str], str | None],
    dataset: str,
    filters: Filters = Filters(),
    *,
    successors_of: SuccessorsOf = record_successors,
) -> Mined:
    """Filter the traced declarations to targets and build their records.

    ``paths``: module -> file path in the project; ``read``: path -> file text (None when it
    cannot be read); ``successors_of``: a record's successors as the audit counts them (the
    command passes the repository track's count across the project,
    ``gapscope.t2.repo.RepoSuccessors``, so a target whose dependents live in other files is
    kept; the default reads the record's own file only). Stages, in order: declarations traced, of a
    project module, of a target kind, with >= min_successors successors, non-trivial, cut out
    exactly, passing the audit.
    """
    funnel = {"declarations traced": len(declarations)}
    dropped: list[dict[str, str]] = []
    project = [d for d in declarations if d.module in paths]
    funnel["project declarations"] = len(project)
    graph = DependencyGraph.of(project)
    depths = graph.depths()
    stage = [d for d in project if d.kind in TARGET_KINDS]
    funnel["eligible kinds"] = len(stage)
    counts = {d.name: len(graph.successors(d.name)) for d in stage}

    def keep(
        name: str, rule: Callable[[TracedDeclaration], bool], why: Callable[[str], str]
    ) -> None:
        nonlocal stage
        for d in stage:
            if not rule(d):
                dropped.append({"target": d.name, "stage": name, "detail": why(d.name)})
        stage = [d for d in stage if rule(d)]
        funnel[name] = len(stage)

    keep(
        f"successors>={filters.min_successors}",
        lambda d: counts[d.name] >= filters.min_successors,
        lambda name: f"{counts[name]} successor(s)",
    )
    keep(
        f"depth>={filters.min_depth}",
        lambda d: depths[d.name] >= filters.min_depth,
        lambda name: f"depth {depths[name]}",
    )
    texts: dict[str, str | None] = {}
    cuts: dict[str, tuple[int, int] | str] = {}
    for d in stage:
        path = paths[d.module]
        if path not in texts:
            texts[path] = read(path)
        text = texts[path]
        cuts[d.name] = cut(text, d) if text is not None else f"{path} cannot be read"
    keep("source cut out", lambda d: isinstance(cuts[d.name], tuple), lambda n: str(cuts[n]))
    candidates: list[MinedTarget] = []
    for d in sorted(stage, key=lambda d: (paths[d.module], d.start)):
        path, span = paths[d.module], cuts[d.name]
        text = texts[path]
        assert text is not None and isinstance(span, tuple)  # what the cut stage kept
        record = make_record(d, path, text, span, dataset)
        candidates.append(
            MinedTarget(
                replace(record, line=len(candidates) + 1),
                d.is_prop,
                counts[d.name],
                depths[d.name],
                d.module,
            )
        )
    checked = audit_records(
        [c.record for c in candidates],
        file_text=lambda r: read(target_file(r)),
        min_successors=filters.min_successors,
        successors_of=successors_of,
    )
    clean = {id(r) for r in checked.valid}
    for finding in checked.findings:
        detail = f"{finding.defect.value}: {finding.detail}"
        dropped.append({"target": str(finding.id), "stage": "audit", "detail": detail})
    kept = [c for c in candidates if id(c.record) in clean]
    funnel["written"] = len(kept)
    return Mined(kept, funnel, dropped)
