"""Lean 4 lexical facts the obfuscator needs: what an identifier is and which words are taken.

Renaming must work on identifier tokens, never on substrings (``add`` inside ``add_zero`` is
not the name ``add``), and every produced name must lex as one Lean identifier that is no
keyword and no core tactic, since obfuscated tactic names become new tokens of the grammar.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

ASCII_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
DIGITS = "0123456789"
# Greek letters Lean treats as letter-like: lowercase without lambda (U+03BB, the `fun`
# keyword), uppercase without the gap U+03A2 and without Pi and Sigma (binder notations).
GREEK_LOWER = "".join(chr(c) for c in range(0x3B1, 0x3CA) if c != 0x3BB)
GREEK_UPPER = "".join(chr(c) for c in range(0x391, 0x3AA) if c not in (0x3A0, 0x3A2, 0x3A3))

START_CHARS = ASCII_LETTERS + GREEK_LOWER + GREEK_UPPER
"""Characters an identifier may start with (no digit, no ``_`` so ``_`` holes stay apart)."""
REST_CHARS = START_CHARS + DIGITS + "_"
"""Characters allowed after the first."""

LEAN_KEYWORDS: frozenset[str] = frozenset(
    [
        "abbrev",
        "at",
        "attribute",
        "axiom",
        "by",
        "calc",
        "class",
        "def",
        "deriving",
        "do",
        "else",
        "end",
        "example",
        "exists",
        "export",
        "extends",
        "forall",
        "fun",
        "from",
        "have",
        "if",
        "import",
        "in",
        "inductive",
        "infix",
        "infixl",
        "infixr",
        "instance",
        "let",
        "local",
        "macro",
        "macro_rules",
        "match",
        "mutual",
        "namespace",
        "noncomputable",
        "notation",
        "opaque",
        "open",
        "partial",
        "postfix",
        "prefix",
        "private",
        "protected",
        "return",
        "scoped",
        "section",
        "set_option",
        "show",
        "sorry",
        "structure",
        "suffices",
        "syntax",
        "termination_by",
        "decreasing_by",
        "then",
        "theorem",
        "this",
        "universe",
        "unsafe",
        "using",
        "variable",
        "where",
        "with",
        "Type",
        "Prop",
        "Sort",
        "true",
        "false",
    ]
)
"""Command, term and binder keywords of Lean 4."""

CORE_TACTICS: frozenset[str] = frozenset(
    [
        "rfl",
        "rw",
        "rwa",
        "rewrite",
        "erw",
        "induction",
        "cases",
        "rcases",
        "obtain",
        "exact",
        "exacts",
        "apply",
        "refine",
        "refine'",
        "intro",
        "intros",
        "rintro",
        "use",
        "exists",
        "constructor",
        "left",
        "right",
        "symm",
        "trivial",
        "decide",
        "simp",
        "simp_all",
        "simp_arith",
        "dsimp",
        "unfold",
        "delta",
        "omega",
        "contradiction",
        "exfalso",
        "absurd",
        "assumption",
        "injection",
        "injections",
        "generalize",
        "revert",
        "clear",
        "subst",
        "specialize",
        "have",
        "show",
        "calc",
        "conv",
        "split",
        "next",
        "case",
        "first",
        "repeat",
        "try",
        "any_goals",
        "all_goals",
        "focus",
        "skip",
        "done",
        "sorry",
        "admit",
        "nofun",
        "nomatch",
        "funext",
        "congr",
        "ac_rfl",
        "native_decide",
        "norm_num",
        "linarith",
        "ring",
        "tauto",
        "aesop",
        "change",
        "replace",
        "suffices",
        "rename_i",
        "exact?",
        "apply?",
        "nth_rewrite",
        "nth_rw",
        "fail",
        "guard_target",
        "guard_hyp",
        "infer_instance",
    ]
)
"""Tactic names of core Lean (and common Mathlib ones a model may try): never produced."""

RESERVED: frozenset[str] = LEAN_KEYWORDS | CORE_TACTICS

_IDENT = r"[^\W\d][\w']*"
_TOKEN = re.compile(
    r"(?P<comment>--[^\n]*|/-.*?-/)"
    r"|(?P<string>\"(?:\\.|[^\"\\])*\")"
    rf"|(?P<name>\.?{_IDENT}(?:\.{_IDENT})*)"
    r"|(?P<number>\d[\w.]*)",
    re.S,
)


def is_identifier(name: str) -> bool:
    """Whether ``name`` is one Lean identifier in our alphabet and not a reserved word."""
    return (
        bool(name)
        and name[0] in START_CHARS
        and all(c in REST_CHARS for c in name[1:])
        and name not in RESERVED
    )


def identifiers(text: str) -> Iterator[str]:
    """Every identifier component of ``text`` outside comments and strings, in order."""
    for match in _TOKEN.finditer(text):
        if match.lastgroup == "name":
            yield from (part for part in match.group().split(".") if part)


def rename(text: str, mapping: Callable[[str], str | None]) -> str:
    """``text`` with identifier components renamed token by token.

    ``mapping`` returns the new name, or None to keep a component. In a dotted name a
    component after the first is renamed only when everything before it was (``MyNat.zero``,
    ``.zero``) so that core names such as ``Iff.rfl`` or ``h.symm`` keep their fields.
    Comments and string literals are left alone.
    """

    def replace(match: re.Match[str]) -> str:
        if match.lastgroup != "name":
            return match.group()
        token = match.group()
        lead = "." if token.startswith(".") else ""
        parts = token.lstrip(".").split(".")
        out: list[str] = []
        chain = True
        for part in parts:
            new = mapping(part) if chain else None
            chain = new is not None
            out.append(part if new is None else new)
        return lead + ".".join(out)

    return _TOKEN.sub(replace, text)
