"""The report's notes in the order a reader needs them, each said once.

A report over a study gathers notes from every log, summary, comparison and section; in the
order they were made, the one that decides how to read a number (``16 of 16 rollouts have no
\\boxed{} answer``) sat among those that change nothing (``9 pairs of models share no
diagnostic``). :func:`ranked` puts first the notes that change how a model's headline number
is read (samples it never answered, runs that did not finish, replies cut by the context
window, degenerate or unboxed answers, untested Lean checks), grouped by model in the first
table's order and by diagnostic; then the other notes of a model; the notes of no model last.
A note several logs make is said once, with how many logs said it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Note:
    """One note, whose model and diagnostic it belongs to ("" for none: a generic note), and
    whether it changes how that model's numbers are read."""

    text: str
    model: str = ""
    diagnostic: str = ""
    reading: bool = False
    source: str = ""
    """The log that made it: a note repeated by several logs says how many."""


def ranked(notes: Iterable[Note], models: Sequence[str]) -> list[str]:
    """``notes`` as the report lists them: reading notes of each model (in ``models``' order,
    then any other model, by diagnostic), the other notes of each model, then the generic
    ones; an identical text once, with ``(in N logs)`` when N > 1 logs made it."""
    sources: dict[str, set[str]] = {}
    first: dict[str, Note] = {}
    for note in notes:
        sources.setdefault(note.text, set()).add(note.source)
        first.setdefault(note.text, note)
    kept = list(first.values())
    order = {m: i for i, m in enumerate(dict.fromkeys([*models, *(n.model for n in kept)]))}
    diagnostics = {d: i for i, d in enumerate(dict.fromkeys(n.diagnostic for n in kept))}

    def rank(note: Note) -> tuple[int, int, int]:
        tier = 2 if not note.model else 0 if note.reading else 1
        return tier, order[note.model], diagnostics[note.diagnostic]

    out = []
    for note in sorted(kept, key=rank):  # stable: a group keeps the order its notes were made
        logs = len(sources[note.text] - {""})
        out.append(note.text + (f" (in {logs} logs)" if logs > 1 else ""))
    return out
