"""The files ``gapscope t2 mine`` writes next to ``--out``, and in what format.

For ``--out records.jsonl``: ``records.jsonl`` (every record, T2's nine fields),
``records.prop.jsonl`` / ``records.noprop.jsonl`` (T2's split: Prop-typed targets, the Hard
subset, and the others), ``records.trace.json`` (the trace cache) and, with a model,
``records.nl.json`` (T2's informalization format: a JSON array of ``{"id",
"target_natural_language": [text]}``) and, while descriptions are missing,
``records.nl.partial.jsonl`` (the journal a rerun resumes from).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gapscope.t2.mining.targets import MinedTarget
from gapscope.t2.records import FIELDS, T2Record


def sibling(out: Path, tag: str, suffix: str) -> Path:
    """``records.jsonl`` + (``prop``, ``.jsonl``) -> ``records.prop.jsonl``."""
    stem = out.name.removesuffix(".jsonl") if out.name.endswith(".jsonl") else out.stem
    return out.with_name(f"{stem}.{tag}{suffix}")


@dataclass(frozen=True)
class OutputPaths:
    records: Path
    prop: Path
    noprop: Path
    trace: Path
    nl: Path
    nl_journal: Path

    @classmethod
    def of(cls, out: Path) -> OutputPaths:
        return cls(
            records=out,
            prop=sibling(out, "prop", ".jsonl"),
            noprop=sibling(out, "noprop", ".jsonl"),
            trace=sibling(out, "trace", ".json"),
            nl=sibling(out, "nl", ".json"),
            nl_journal=sibling(out, "nl.partial", ".jsonl"),
        )

    def written(self) -> tuple[Path, ...]:
        """The files a run writes whatever happened before (the trace cache is reused)."""
        return (self.records, self.prop, self.noprop, self.nl)


def record_line(record: T2Record) -> str:
    """One JSONL line with exactly T2's nine fields, in T2's order."""
    return json.dumps({f: getattr(record, f) for f in FIELDS}, ensure_ascii=False)


def write_records(paths: OutputPaths, targets: Sequence[MinedTarget]) -> None:
    """All records, and the prop/noprop split by Lean's Hard tag."""
    for path, chosen in (
        (paths.records, targets),
        (paths.prop, [t for t in targets if t.is_prop]),
        (paths.noprop, [t for t in targets if not t.is_prop]),
    ):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(record_line(t.record) + "\n" for t in chosen), encoding="utf-8")


def write_nl(path: Path, descriptions: dict[str, str]) -> None:
    """T2's informalization file: ``[{"id", "target_natural_language": [text]}]``."""
    rows = [{"id": k, "target_natural_language": [v]} for k, v in descriptions.items()]
    path.write_text(json.dumps(rows, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
