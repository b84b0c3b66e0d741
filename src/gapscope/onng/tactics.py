"""Tactic aliases as Lean ``macro``s, so that an obfuscated tactic name really works.

Each tactic of the game has a macro shape: its arguments (none, a term, rewrite rules with an
optional location, ...) and the core tactic it expands to. ``use`` is not in core Lean (it is
Mathlib's), so the library always defines it, under its obfuscated or its own name. A core
tactic whose name the renaming keeps gets no macro: it already exists.
"""

from __future__ import annotations

from collections.abc import Mapping

_P = "Lean.Parser.Tactic."
_SHAPES: dict[str, tuple[str, str]] = {
    # tactic: (parameters after the atom, expansion inside `(tactic| ...))
    "rfl": ("", "rfl"),
    "rw": (
        f" s:{_P}rwRuleSeq loc:({_P}location)?",
        "rw $s $(loc)?",
    ),
    "induction": (
        f" x:term alts:({_P}inductionAlts)?",
        "induction $x $[$alts]?",
    ),
    "cases": (
        f" x:term alts:({_P}inductionAlts)?",
        "cases $x $[$alts]?",
    ),
    "exact": (" e:term", "exact $e"),
    "apply": (" e:term", "apply $e"),
    "intro": (" xs:(ppSpace colGt term:max)*", "intro $xs*"),
    "use": (" e:term", "refine ⟨$e, ?_⟩"),
    "left": ("", "left"),
    "right": ("", "right"),
}
_USAGE: dict[str, str] = {
    "rfl": "{t}",
    "rw": "{t} [h₁, ← h₂]   or   {t} [h] at h'",
    "induction": "{t} n with | {zero} => tac | {succ} k ih => tac",
    "cases": "{t} h with | ctor args => tac   (on {T}: | {zero} => … | {succ} k => …)",
    "exact": "{t} term",
    "apply": "{t} term",
    "intro": "{t} h",
    "use": "{t} witness   (for a goal ∃ c, P c; leaves P witness)",
    "left": "{t}   (first alternative of an Or)",
    "right": "{t}   (second alternative of an Or)",
}
CUSTOM_TACTICS = frozenset({"use"})
"""Tactics the library defines itself (they do not exist in core Lean 4)."""


def supported_tactics() -> frozenset[str]:
    return frozenset(_SHAPES)


def macro(original: str, alias: str) -> str:
    """The ``macro`` making ``alias`` behave as ``original``."""
    params, expansion = _SHAPES[original]
    return f'macro "{alias}"{params} : tactic => `(tactic| {expansion})'


def macros(tactics: tuple[str, ...], renaming: Mapping[str, str]) -> list[str]:
    """The macros a rendered file needs: custom tactics always, renamed core tactics."""
    lines: list[str] = []
    for tactic in tactics:
        alias = renaming.get(tactic, tactic)
        if tactic in CUSTOM_TACTICS or alias != tactic:
            lines.append(macro(tactic, alias))
    return lines


def usage(original: str, renaming: Mapping[str, str]) -> str:
    """How to write tactic ``original`` under ``renaming`` (the prompt's tactic list)."""
    return _USAGE[original].format(
        t=renaming.get(original, original),
        zero=renaming.get("zero", "zero"),
        succ=renaming.get("succ", "succ"),
        T=renaming.get("MyNat", "MyNat"),
    )
