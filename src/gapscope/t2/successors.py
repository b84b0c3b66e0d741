"""The target's identity and its successors: the declarations that use it, which are its tests.

The paper's successors are the target's dependents, not every later declaration: one that
never uses the target passes whatever the answer says, so counting it would inflate graded TA
and move TA-by-#successors off the paper's axis. ``after_target_code`` is split into top-level
declarations; a declaration is a successor when one of its identifier tokens (comments and
strings blanked, see :meth:`Declaration.uses`) names the target - directly - or names an
earlier successor - transitively, as far as the program shows it (Lean declares before use,
so one pass in file order finds every chain). For each successor T2 also needs whether it is
proved without ``sorry``: in the released existing-track records most successors are ``sorry``
stubs, so passing them checks only that their statements still elaborate.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
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
    """One declaration after the target that depends on it; lines are 0-based within
    ``after_target_code``. ``direct``: it names the target itself (else it uses a successor)."""

    kind: str
    name: str | None
    direct: bool
    uses_sorry: bool
    start_line: int
    end_line: int

    @property
    def proved_without_sorry(self) -> bool:
        return not self.uses_sorry


def successors_in(declarations: Sequence[Declaration], target: TargetIdentity) -> list[Successor]:
    """The declarations among ``declarations`` (in file order) that use ``target``, directly or
    through an earlier one that does."""
    used = {target.short_name}
    found: list[Successor] = []
    for d in declarations:
        if not d.is_declaration or not d.uses(used):
            continue
        found.append(
            Successor(
                kind=d.kind,
                name=d.name,
                direct=d.uses((target.short_name,)),
                uses_sorry=d.uses_sorry(),
                start_line=d.start_line,
                end_line=d.end_line,
            )
        )
        if d.short_name is not None:
            used.add(d.short_name)
    return found


def later_declarations(record: T2Record) -> list[Declaration]:
    """Every declaration in ``after_target_code`` (commands such as ``open`` are not tests)."""
    return [d for d in split_declarations(record.after_target_code) if d.is_declaration]


def record_successors(record: T2Record) -> list[Successor]:
    """The target's dependents in ``after_target_code``."""
    return successors_in(later_declarations(record), target_identity(record))


def successor_profile(
    records: Sequence[T2Record],
    successors_of: Callable[[T2Record], Sequence[Successor]] = record_successors,
) -> dict[str, object]:
    """How strong each record's tests are: records per number of successors (dependents), per
    number of direct dependents, per number of later declarations, and how many records have no
    successor theorem proved without ``sorry`` (their TA only checks that statements
    elaborate). ``successors_of``: as for the audit (the repository track counts across the
    project)."""
    found = [successors_of(r) for r in records]
    by_count = Counter(len(s) for s in found)
    by_direct = Counter(sum(x.direct for x in s) for s in found)
    by_later = Counter(len(later_declarations(r)) for r in records)
    only_stubs = sum(
        not any(x.kind in THEOREM_LIKE_KINDS and x.proved_without_sorry for x in s) for s in found
    )
    return {
        "records_by_successors": dict(sorted(by_count.items())),
        "records_by_direct_successors": dict(sorted(by_direct.items())),
        "records_by_later_declarations": dict(sorted(by_later.items())),
        "no_theorem_proved_without_sorry": only_stubs,
    }
