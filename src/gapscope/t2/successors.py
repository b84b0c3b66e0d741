"""The target's identity and its successors: the declarations after it, which are its tests.

``after_target_code`` is split into top-level declarations; for each one T2 needs whether it
mentions the target (a word-boundary match of the target's short name, the way T2 built its
dependency graph) and whether it is proved without ``sorry`` (in the released existing-track
records most successors are ``sorry`` stubs, so passing them checks only that their
statements still elaborate).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from gapscope.t2.declarations import THEOREM_LIKE_KINDS, Declaration, head, split_declarations
from gapscope.t2.records import T2Record


@dataclass(frozen=True)
class TargetIdentity:
    """What an answer must declare: the target's kind (None if unknown) and name."""

    kind: str | None
    name: str

    @property
    def short_name(self) -> str:
        return self.name.replace("«", "").replace("»", "").rsplit(".", 1)[-1]


def target_identity(record: T2Record) -> TargetIdentity:
    """Kind and name from the target's own head; else from ``target_code_name``.

    ``target_code_name`` is ``"<kind> <name>"`` in the existing track (kind ``unknown`` for
    kinds jixia did not name) and ``<file.lean>/<short name>`` in the research track.
    """
    found = head(record.target_code)
    if found is not None and found[1] is not None:
        return TargetIdentity(found[0], found[1])
    kind, _, name = record.target_code_name.strip().partition(" ")
    if not name:
        kind, name = "unknown", kind.rsplit("/", 1)[-1]
    return TargetIdentity(None if kind == "unknown" else kind, name)


@dataclass(frozen=True)
class Successor:
    """One declaration after the target; lines are 0-based within ``after_target_code``."""

    kind: str
    name: str | None
    mentions_target: bool
    uses_sorry: bool
    start_line: int
    end_line: int

    @property
    def proved_without_sorry(self) -> bool:
        return not self.uses_sorry


def successor_of(declaration: Declaration, target: TargetIdentity) -> Successor:
    return Successor(
        kind=declaration.kind,
        name=declaration.name,
        mentions_target=declaration.mentions(target.short_name),
        uses_sorry=declaration.uses_sorry(),
        start_line=declaration.start_line,
        end_line=declaration.end_line,
    )


def successors(record: T2Record) -> list[Successor]:
    """Every declaration in ``after_target_code`` (commands such as ``open`` are not tests)."""
    target = target_identity(record)
    return [
        successor_of(d, target)
        for d in split_declarations(record.after_target_code)
        if d.is_declaration
    ]


def successor_profile(records: Sequence[T2Record]) -> dict[str, object]:
    """How strong each record's tests are: records per number of successors, per number of
    successors that mention the target, and how many records have no successor theorem
    proved without ``sorry`` (their TA only checks that statements elaborate)."""
    found = [successors(r) for r in records]
    by_count = Counter(len(s) for s in found)
    by_mentions = Counter(sum(x.mentions_target for x in s) for s in found)
    only_stubs = sum(
        not any(x.kind in THEOREM_LIKE_KINDS and x.proved_without_sorry for x in s) for s in found
    )
    return {
        "records_by_successors": dict(sorted(by_count.items())),
        "records_by_mentioning_successors": dict(sorted(by_mentions.items())),
        "no_theorem_proved_without_sorry": only_stubs,
    }
